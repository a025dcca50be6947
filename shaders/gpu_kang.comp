// Kang's approximate implicit update, sim/src/integrate.c's step_kang, in two passes
// after the force evaluation.  Stages 0 and 1: each vertex's predicted velocity change
// along its force, g = |dv_last| f / |f|, into tmp_v (stage 0 first restarts the memory
// from the explicit dv = h f / m, as the CPU does when its history is invalid).
// Stage 2: a gather of the neighbours' g over the incident springs, in the CPU's
// order, then dv = (h f + sum (h^2 k + h kd) g_j) / (m + h^2 (sum k + k_a) +
// h (sum kd + kd_a + c m)), v += dv, x += h v.
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(location = GPU_LOC_STAGE) uniform uint u_stage;
layout(std430, binding = GPU_BIND_VERTICES) readonly buffer Vertices { gpu_vertex vert[]; };
layout(std430, binding = GPU_BIND_SPRINGS) readonly buffer Springs { gpu_spring spr[]; };
layout(std430, binding = GPU_BIND_ADJACENCY) readonly buffer Adjacency { uint adj[]; };
layout(std430, binding = GPU_BIND_F) readonly buffer Force { vec4 F[]; };
layout(std430, binding = GPU_BIND_X) buffer PosX { vec4 x[]; };
layout(std430, binding = GPU_BIND_V) buffer VelV { vec4 v[]; };
layout(std430, binding = GPU_BIND_TMP_V) buffer Predicted { vec4 g[]; };
layout(std430, binding = GPU_BIND_KANG_DV) buffer LastDv { vec4 dv[]; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	float h = P.h;
	vec3 f = F[i].xyz;
	if (u_stage < 2u) {
		precise vec3 d = dv[i].xyz;
		if (u_stage == 0u) {
			precise float s0 = h * x[i].w;
			d = f * s0;
			dv[i] = vec4(d, 0.0);
		}
		precise float fn = sqrt(f.x * f.x + f.y * f.y + f.z * f.z);
		precise float s = fn > 0.0 ? sqrt(d.x * d.x + d.y * d.y + d.z * d.z) / fn : 0.0;
		g[i] = vec4(f * s, 0.0);
		return;
	}
	gpu_vertex vx = vert[i];
	precise float h2 = h * h;
	precise vec3 acc = vec3(0.0);
	for (uint e = vx.spring_first; e < vx.spring_first + vx.spring_count; e++) {
		gpu_spring sp = spr[adj[e]];
		precise float wgt = h2 * sp.k + h * sp.kd;
		acc += wgt * g[sp.a == i ? sp.b : sp.a].xyz;
	}
	vec4 xi = x[i], vi = v[i];
	precise vec3 vn = vi.xyz;
	if (xi.w == 0.0) {
		dv[i] = vec4(0.0);
	} else {
		float m = vx.mass, c = P.air_damping;
		precise float denom = m + h2 * (vx.kang_k + vx.rest.w) + h * (vx.kang_kd + vx.anchor_kd + c * m);
		precise vec3 d = (h * f + acc) / denom;
		dv[i] = vec4(d, 0.0);
		vn = vn + d;
	}
	precise vec3 xn = xi.xyz + h * vn;
	x[i] = vec4(xn, xi.w);
	v[i] = vec4(vn, vi.w);
}
