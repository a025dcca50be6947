#version 430 core
// Lit surfaces: the cloth, the obstacles, the pointer's cone and the vertex highlights.
// Lighting happens in view space because the light rig follows the camera (mesh.frag).

layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;

layout(location = 0) uniform mat4 u_model;
layout(location = 1) uniform mat4 u_view;
layout(location = 2) uniform mat4 u_projection;
// The inverse transpose of view * model: boxes and the cone are scaled unevenly.
layout(location = 3) uniform mat3 u_normal_matrix;

out vec3 v_position;
out vec3 v_normal;

void main()
{
	vec4 p = u_view * u_model * vec4(a_position, 1.0);
	v_position = p.xyz;
	v_normal = u_normal_matrix * a_normal;
	gl_Position = u_projection * p;
}
