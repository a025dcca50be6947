// The cloth's per-vertex normals for the state at GPU_BIND_STATE_X, one invocation per
// vertex: a gather over the vertex's incident triangles (the adjacency the wind forces
// use, in triangle order), each adding its unnormalised e1 x e2 (area-weighted), then
// normalised.  This is rd_vertex_normals (app/render.c) operation for operation: the CPU
// scatters the same products into the same sums in the same order, so the sums agree to
// the bit and only GLSL's sqrt and division may differ from the CPU's by a few ulps.
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(std430, binding = GPU_BIND_VERTICES) readonly buffer Vertices { gpu_vertex vert[]; };
layout(std430, binding = GPU_BIND_ADJACENCY) readonly buffer Adjacency { uint adj[]; };
layout(std430, binding = GPU_BIND_TRIANGLES) readonly buffer Triangles { uint tri[]; };
layout(std430, binding = GPU_BIND_STATE_X) readonly buffer StateX { vec4 X[]; };
layout(std430, binding = GPU_BIND_NORMALS) writeonly buffer Normals { vec4 N[]; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	gpu_vertex vx = vert[i];
	precise vec3 s = vec3(0.0);
	for (uint e = vx.tri_first; e < vx.tri_first + vx.tri_count; e++) {
		uint t = adj[e];
		vec3 a = X[tri[3 * t]].xyz, b = X[tri[3 * t + 1]].xyz, c = X[tri[3 * t + 2]].xyz;
		precise vec3 e1 = b - a, e2 = c - a;
		precise vec3 n = vec3(e1.y * e2.z - e1.z * e2.y, e1.z * e2.x - e1.x * e2.z, e1.x * e2.y - e1.y * e2.x);
		s += n;
	}
	precise float len = sqrt(s.x * s.x + s.y * s.y + s.z * s.z);
	// an isolated or fully degenerate vertex, or a non-finite state mid blow-up
	if (!(len > 1e-30) || isinf(len) || isnan(len)) {
		N[i] = vec4(0.0, 1.0, 0.0, 0.0);
		return;
	}
	N[i] = vec4(s.x / len, s.y / len, s.z / len, 0.0);
}
