// Explicit midpoint (RK2), sim/src/integrate.c's step_midpoint, in two passes around
// the second force evaluation.  Stage 0: the half-step state (x + h/2 v, v + h/2 a)
// into tmp_x/tmp_v.  Stage 1: x += h v_mid, v += h a_mid.
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(location = GPU_LOC_STAGE) uniform uint u_stage;
layout(std430, binding = GPU_BIND_F) readonly buffer Force { vec4 F[]; };
layout(std430, binding = GPU_BIND_X) buffer PosX { vec4 x[]; };
layout(std430, binding = GPU_BIND_V) buffer VelV { vec4 v[]; };
layout(std430, binding = GPU_BIND_TMP_X) buffer TmpX { vec4 xm[]; };
layout(std430, binding = GPU_BIND_TMP_V) buffer TmpV { vec4 vm[]; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	float h = P.h;
	vec4 xi = x[i], vi = v[i];
	if (u_stage == 0u) {
		float hh = 0.5 * h;
		precise float s = hh * xi.w;
		precise vec3 xh = xi.xyz + hh * vi.xyz;
		precise vec3 vh = vi.xyz + s * F[i].xyz;
		xm[i] = vec4(xh, xi.w);
		vm[i] = vec4(vh, 0.0);
	} else {
		precise float s = h * xi.w;
		precise vec3 xn = xi.xyz + h * vm[i].xyz;
		precise vec3 vn = vi.xyz + s * F[i].xyz;
		x[i] = vec4(xn, xi.w);
		v[i] = vec4(vn, vi.w);
	}
}
