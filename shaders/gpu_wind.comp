// The aerodynamic force on every triangle (drag and lift, sim_add_wind_forces in
// sim/src/forces.c, operation for operation), one invocation per triangle, into
// tri_force; gpu_forces.comp then gives each vertex a third of its triangles' forces.
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(std430, binding = GPU_BIND_TRIANGLES) readonly buffer Triangles { uint tri[]; };
layout(std430, binding = GPU_BIND_STATE_X) readonly buffer StateX { vec4 X[]; };
layout(std430, binding = GPU_BIND_STATE_V) readonly buffer StateV { vec4 V[]; };
layout(std430, binding = GPU_BIND_TRI_FORCE) writeonly buffer TriForce { vec4 tri_force[]; };

void main()
{
	uint t = gl_GlobalInvocationID.x;
	if (t >= P.triangle_count)
		return;
	uint a = tri[3 * t], b = tri[3 * t + 1], c = tri[3 * t + 2];
	precise vec3 e1 = X[b].xyz - X[a].xyz, e2 = X[c].xyz - X[a].xyz;
	precise vec3 n = vec3(e1.y * e2.z - e1.z * e2.y, e1.z * e2.x - e1.x * e2.z, e1.x * e2.y - e1.y * e2.x);
	precise float n_len = sqrt(n.x * n.x + n.y * n.y + n.z * n.z);
	precise vec3 u = P.wind.xyz - (V[a].xyz + V[b].xyz + V[c].xyz) / 3.0;
	precise float speed = sqrt(u.x * u.x + u.y * u.y + u.z * u.z);
	if (n_len <= 0.0 || speed <= 0.0) {
		tri_force[t] = vec4(0.0);
		return;
	}
	precise float area = 0.5 * n_len;
	n = n * (1.0 / n_len);
	precise float cos_t = (n.x * u.x + n.y * u.y + n.z * u.z) / speed;
	if (cos_t < 0.0) {
		n = -n;
		cos_t = -cos_t;
	}
	precise float sin_t = sqrt(max(0.0, 1.0 - cos_t * cos_t));
	precise float q = P.wind.w * area * speed * speed;
	precise float drag = q * P.drag * cos_t / speed;
	precise vec3 force = drag * u;
	if (sin_t > 1e-6 && P.lift != 0.0) {
		precise vec3 l = n - cos_t * u / speed;
		l = l * (1.0 / sqrt(l.x * l.x + l.y * l.y + l.z * l.z));
		precise float lift = q * P.lift * cos_t * sin_t;
		force += lift * l;
	}
	tri_force[t] = vec4(force, 0.0);
}
