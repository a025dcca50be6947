// Provot's strain limiting (sim/src/strain.c) as coloured Gauss-Seidel sweeps, for
// `tela run --backend gpu --gpu-strain-limit`.  The structural and shear springs come in
// colours, none of whose springs share a vertex (app/gpu_backend.c colours them once), so
// one dispatch per colour moves the ends of every spring of the colour in place, in
// parallel and without races, exactly as the CPU's limit_spring does (each end by its
// share of the inverse mass; a kinematic end not at all).  A sweep runs the colours in
// turn, forwards then backwards on alternate sweeps as the CPU alternates its spring order.
// Stages:
//   0 per vertex: keep the positions before limiting (ACC_X)
//   1 per spring of one colour (list entries u_first .. u_first + u_count): correct it
//     when it is over the limit, and count the correction in the counter (an integer
//     atomic: the host stops after a sweep that corrected nothing)
//   2 per vertex: v += (x - before) / h
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(location = GPU_LOC_STAGE) uniform uint u_stage;
layout(location = GPU_LOC_FIRST) uniform uint u_first;
layout(location = GPU_LOC_COUNT) uniform uint u_count;
layout(std430, binding = GPU_BIND_SPRINGS) readonly buffer Springs { gpu_spring spr[]; };
layout(std430, binding = GPU_BIND_STRAIN_LIST) readonly buffer List { uint list[]; };
layout(std430, binding = GPU_BIND_X) buffer PosX { vec4 x[]; };
layout(std430, binding = GPU_BIND_V) buffer VelV { vec4 v[]; };
layout(std430, binding = GPU_BIND_ACC_X) buffer Before { vec4 before[]; };
layout(std430, binding = GPU_BIND_COUNTER) buffer Counter { uint corrected; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (u_stage == 1u) {
		if (i >= u_count)
			return;
		gpu_spring sp = spr[list[u_first + i]];
		vec4 pa = x[sp.a], pb = x[sp.b];
		float wa = pa.w, wb = pb.w;
		if (wa + wb == 0.0)
			return;
		precise vec3 d = pb.xyz - pa.xyz;
		precise float l = sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
		precise float max_l = P.strain_limit * sp.rest;
		if (!(l > P.strain_trigger * sp.rest) || l <= max_l || l <= 0.0)
			return;
		precise float corr = (l - max_l) / (l * (wa + wb));
		precise vec3 na = pa.xyz + wa * corr * d;
		precise vec3 nb = pb.xyz - wb * corr * d;
		x[sp.a] = vec4(na, wa);
		x[sp.b] = vec4(nb, wb);
		atomicAdd(corrected, 1u);
		return;
	}
	if (i >= P.vertex_count)
		return;
	if (u_stage == 0u) {
		before[i] = x[i];
	} else {
		precise vec3 vn = v[i].xyz + (x[i].xyz - before[i].xyz) * (1.0 / P.h);
		v[i] = vec4(vn, v[i].w);
	}
}
