// Classical fourth-order Runge-Kutta, sim/src/integrate.c's step_rk4.  Stages 0 and 1
// (after each of the four force evaluations, at the stage state the forces read): add
// weight times the derivative (v, f / m) to the accumulators (stage 0, the first, starts
// them from 0) and, when next > 0, write the next stage state x + next h k.  Stage 2:
// x += h/6 acc_x, v += h/6 acc_v.
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(location = GPU_LOC_STAGE) uniform uint u_stage;
layout(location = GPU_LOC_WEIGHT) uniform float u_weight;
layout(location = GPU_LOC_NEXT) uniform float u_next;
layout(std430, binding = GPU_BIND_F) readonly buffer Force { vec4 F[]; };
layout(std430, binding = GPU_BIND_X) buffer PosX { vec4 x[]; };
layout(std430, binding = GPU_BIND_V) buffer VelV { vec4 v[]; };
layout(std430, binding = GPU_BIND_STATE_V) readonly buffer StateV { vec4 vs[]; };
layout(std430, binding = GPU_BIND_TMP_X) buffer TmpX { vec4 tx[]; };
layout(std430, binding = GPU_BIND_TMP_V) buffer TmpV { vec4 tv[]; };
layout(std430, binding = GPU_BIND_ACC_X) buffer AccX { vec4 ax[]; };
layout(std430, binding = GPU_BIND_ACC_V) buffer AccV { vec4 av[]; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	float h = P.h;
	vec4 xi = x[i], vi = v[i];
	if (u_stage < 2u) {
		float inv_m = xi.w;
		precise vec3 kx = vs[i].xyz;
		precise vec3 kv = F[i].xyz * inv_m;
		bool first = u_stage == 0u;
		precise vec3 sx = (first ? vec3(0.0) : ax[i].xyz) + u_weight * kx;
		precise vec3 sv = (first ? vec3(0.0) : av[i].xyz) + u_weight * kv;
		ax[i] = vec4(sx, 0.0);
		av[i] = vec4(sv, 0.0);
		if (u_next > 0.0) {
			precise vec3 nx = xi.xyz + u_next * h * kx;
			precise vec3 nv = vi.xyz + u_next * h * kv;
			tx[i] = vec4(nx, xi.w);
			tv[i] = vec4(nv, 0.0);
		}
	} else {
		float s = h / 6.0;
		precise vec3 xn = xi.xyz + s * ax[i].xyz;
		precise vec3 vn = vi.xyz + s * av[i].xyz;
		x[i] = vec4(xn, xi.w);
		v[i] = vec4(vn, vi.w);
	}
}
