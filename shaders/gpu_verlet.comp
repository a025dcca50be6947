// Position Verlet, sim/src/integrate.c's step_verlet: x' = x + d (x - x_prev) + h^2 a
// (d = 1, or 0.99 in the drag form), v = (x' - x) / h; a kinematic vertex (x.w = 0)
// moves by h times its constraint velocity.
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(std430, binding = GPU_BIND_F) readonly buffer Force { vec4 F[]; };
layout(std430, binding = GPU_BIND_X) buffer PosX { vec4 x[]; };
layout(std430, binding = GPU_BIND_V) buffer VelV { vec4 v[]; };
layout(std430, binding = GPU_BIND_X_PREV) buffer PosPrev { vec4 xp[]; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	float h = P.h, d = P.verlet_d;
	precise float h2 = h * h;
	vec4 xi = x[i], vi = v[i];
	float inv_m = xi.w;
	precise vec3 xn = xi.xyz;
	precise vec3 next;
	if (inv_m == 0.0)
		next = xn + h * vi.xyz;
	else
		next = xn + d * (xn - xp[i].xyz) + h2 * inv_m * F[i].xyz;
	precise vec3 vn = (next - xn) / h;
	xp[i] = vec4(xn, xp[i].w);
	x[i] = vec4(next, inv_m);
	v[i] = vec4(vn, vi.w);
}
