// The renderer's smoothing pass over the normals gpu_normals.comp left (rd_smooth_normals,
// app/render.c), one invocation per vertex: a gather over the vertex's incident triangles
// (the adjacency, in triangle order), each adding the sum of its three vertices' normals,
// then normalised.  The CPU scatters the same sums in the same order; where they cancel
// (a fold flat on itself) the vertex keeps its own normal.
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(std430, binding = GPU_BIND_VERTICES) readonly buffer Vertices { gpu_vertex vert[]; };
layout(std430, binding = GPU_BIND_ADJACENCY) readonly buffer Adjacency { uint adj[]; };
layout(std430, binding = GPU_BIND_TRIANGLES) readonly buffer Triangles { uint tri[]; };
layout(std430, binding = GPU_BIND_NORMALS) readonly buffer Normals { vec4 N[]; };
layout(std430, binding = GPU_BIND_SMOOTH_NORMALS) writeonly buffer Smooth { vec4 S[]; };

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= P.vertex_count)
		return;
	gpu_vertex vx = vert[i];
	precise vec3 s = vec3(0.0);
	for (uint e = vx.tri_first; e < vx.tri_first + vx.tri_count; e++) {
		uint t = adj[e];
		precise vec3 sum = N[tri[3 * t]].xyz + N[tri[3 * t + 1]].xyz;
		sum += N[tri[3 * t + 2]].xyz;
		s += sum;
	}
	precise float len = sqrt(s.x * s.x + s.y * s.y + s.z * s.z);
	if (!(len > 1e-6) || isinf(len) || isnan(len)) {
		S[i] = N[i];
		return;
	}
	S[i] = vec4(s.x / len, s.y / len, s.z / len, 0.0);
}
