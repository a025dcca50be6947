// Provot's strain limiting (sim/src/strain.c's rule) as Jacobi sweeps, for
// `tela run --backend gpu --gpu-strain-limit`.  The CPU's Gauss-Seidel sweeps move each
// spring's ends in turn; here every vertex gathers, from the state before the sweep, the
// corrections of its over-stretched structural and shear springs (each end moves by its
// share of the inverse mass, a kinematic end not at all) and moves by their mean, so
// vertices with several corrections do not overshoot.  Stages:
//   0 per vertex: keep the positions before limiting (ACC_X)
//   1 per vertex: one sweep from STATE_X into TMP_X; counts over-limit springs (each
//     seen from its a end) in the counter, an integer atomic: the host stops when a
//     sweep finds none, as the CPU does
//   2 per vertex: x = the final positions (STATE_X), v += (x - before) / h
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(location = GPU_LOC_STAGE) uniform uint u_stage;
layout(std430, binding = GPU_BIND_VERTICES) readonly buffer Vertices { gpu_vertex vert[]; };
layout(std430, binding = GPU_BIND_SPRINGS) readonly buffer Springs { gpu_spring spr[]; };
layout(std430, binding = GPU_BIND_ADJACENCY) readonly buffer Adjacency { uint adj[]; };
layout(std430, binding = GPU_BIND_STATE_X) buffer Src { vec4 src[]; };
layout(std430, binding = GPU_BIND_TMP_X) buffer Dst { vec4 dst[]; };
layout(std430, binding = GPU_BIND_X) buffer PosX { vec4 x[]; };
layout(std430, binding = GPU_BIND_V) buffer VelV { vec4 v[]; };
layout(std430, binding = GPU_BIND_ACC_X) buffer Before { vec4 before[]; };
layout(std430, binding = GPU_BIND_COUNTER) buffer Counter { uint over; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	if (u_stage == 0u) {
		before[i] = x[i];
		return;
	}
	if (u_stage == 2u) {
		vec4 xi = src[i];
		precise vec3 vn = v[i].xyz + (xi.xyz - before[i].xyz) * (1.0 / P.h);
		x[i] = xi;
		v[i] = vec4(vn, v[i].w);
		return;
	}
	gpu_vertex vx = vert[i];
	vec4 xi = src[i];
	precise vec3 moved = vec3(0.0);
	uint n_active = 0u, counted = 0u;
	for (uint e = vx.spring_first; e < vx.spring_first + vx.spring_count; e++) {
		gpu_spring sp = spr[adj[e]];
		if (sp.kind == 2u) // bend springs are not limited
			continue;
		vec4 pa = src[sp.a], pb = src[sp.b];
		float wa = pa.w, wb = pb.w;
		if (wa + wb == 0.0)
			continue;
		precise vec3 d = pb.xyz - pa.xyz;
		precise float l = sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
		precise float max_l = P.strain_limit * sp.rest;
		if (!(l > P.strain_trigger * sp.rest) || l <= max_l || l <= 0.0)
			continue;
		precise float corr = (l - max_l) / (l * (wa + wb));
		if (sp.a == i) {
			moved += wa * corr * d;
			counted++;
		} else {
			moved -= wb * corr * d;
		}
		n_active++;
	}
	if (counted > 0u)
		atomicAdd(over, counted);
	precise vec3 xn = n_active > 0u ? xi.xyz + moved / float(n_active) : xi.xyz;
	dst[i] = vec4(xn, xi.w);
}
