// The total force on every vertex for the state bound at GPU_BIND_STATE_X/V, one
// invocation per vertex: a gather over the vertex's incident springs (no scatter, so no
// atomics and no races), then gravity, air damping, the point force, the anchor and the
// wind shares of its triangles (gpu_wind.comp ran first).  The arithmetic and its order
// are sim/src/forces.c's, term by term; `precise` forbids fused multiply-adds, which the
// CPU build also forbids (-ffp-contract=off).
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(std430, binding = GPU_BIND_VERTICES) readonly buffer Vertices { gpu_vertex vert[]; };
layout(std430, binding = GPU_BIND_SPRINGS) readonly buffer Springs { gpu_spring spr[]; };
layout(std430, binding = GPU_BIND_ADJACENCY) readonly buffer Adjacency { uint adj[]; };
layout(std430, binding = GPU_BIND_TRI_FORCE) readonly buffer TriForce { vec4 tri_force[]; };
layout(std430, binding = GPU_BIND_STATE_X) readonly buffer StateX { vec4 X[]; };
layout(std430, binding = GPU_BIND_STATE_V) readonly buffer StateV { vec4 V[]; };
layout(std430, binding = GPU_BIND_F) writeonly buffer Force { vec4 F[]; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	gpu_vertex vx = vert[i];
	precise vec3 s = vec3(0.0);
	for (uint e = vx.spring_first; e < vx.spring_first + vx.spring_count; e++) {
		gpu_spring sp = spr[adj[e]];
		vec3 xa = X[sp.a].xyz, xb = X[sp.b].xyz, va = V[sp.a].xyz, vb = V[sp.b].xyz;
		precise float dx = xb.x - xa.x, dy = xb.y - xa.y, dz = xb.z - xa.z;
		// the bias keeps coincident ends defined, as on the CPU (forces.c, LENGTH2_BIAS)
		precise float l = sqrt(dx * dx + dy * dy + dz * dz + 1e-30);
		precise float inv_l = 1.0 / l;
		precise float ux = dx * inv_l, uy = dy * inv_l, uz = dz * inv_l;
		precise float rel = (vb.x - va.x) * ux + (vb.y - va.y) * uy + (vb.z - va.z) * uz;
		precise float mag = sp.k * (l - sp.rest) + sp.kd * rel;
		precise vec3 f = vec3(mag * ux, mag * uy, mag * uz);
		if (sp.a == i)
			s += f;
		else
			s -= f;
	}
	float m = vx.mass, c = P.air_damping;
	vec3 v = V[i].xyz;
	precise vec3 f = m * P.gravity.xyz - c * m * v + vx.point_force.xyz + s;
	float ka = vx.rest.w, kd = vx.anchor_kd;
	if (ka != 0.0 || kd != 0.0)
		f += -ka * (X[i].xyz - vx.rest.xyz) - kd * v;
	// Only when gpu_wind.comp ran for this evaluation: otherwise nothing wrote tri_force,
	// and a store glBufferData made without data "remains uninitialized and thus
	// undefined" (GL 4.3 glBufferData).  llvmpipe happens to hand out zeros; the NVIDIA
	// driver recycled memory, so on an H200 windless cloths picked up stale forces and
	// blew up or stretched to 3x (docs/gpu.md, "Synchronisation").  The CPU likewise adds
	// no wind term when the wind is off.
	if (P.wind_on != 0u)
		for (uint e = vx.tri_first; e < vx.tri_first + vx.tri_count; e++)
			f += tri_force[adj[e]].xyz / 3.0;
	F[i] = vec4(f, 0.0);
}
