// Symplectic (semi-implicit) Euler, sim/src/integrate.c's symplectic_kernel: the
// velocity first, then the position with the new velocity.
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
	precise vec3 vn = vi.xyz + s * F[i].xyz;
	precise vec3 xn = xi.xyz + h * vn;
	x[i] = vec4(xn, xi.w);
	v[i] = vec4(vn, vi.w);
}
