// Explicit (forward) Euler, sim/src/integrate.c's euler_kernel: x += h v, v += h x.w f,
// both from the start of the step (x.w, the inverse mass, is 0 for a kinematic vertex).
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(std430, binding = GPU_BIND_F) readonly buffer Force { vec4 F[]; };
layout(std430, binding = GPU_BIND_X) buffer PosX { vec4 x[]; };
layout(std430, binding = GPU_BIND_V) buffer VelV { vec4 v[]; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	float h = P.h;
	vec4 xi = x[i], vi = v[i];
	precise float s = h * xi.w;
	precise vec3 xn = xi.xyz + h * vi.xyz;
	precise vec3 vn = vi.xyz + s * F[i].xyz;
	x[i] = vec4(xn, xi.w);
	v[i] = vec4(vn, vi.w);
}
