#version 430 core
// Unlit lines: the wireframe, the floor grid and the pointer's bounding sphere.

layout(location = 0) in vec3 a_position;

layout(location = 0) uniform mat4 u_model;
layout(location = 1) uniform mat4 u_view;
layout(location = 2) uniform mat4 u_projection;

out vec3 v_world;

void main()
{
	vec4 world = u_model * vec4(a_position, 1.0);
	v_world = world.xyz;
	gl_Position = u_projection * u_view * world;
}
