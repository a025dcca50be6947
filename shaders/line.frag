#version 430 core
// A flat colour whose alpha fades with the distance from a centre: the floor grid is
// finite, and fading it out hides both its edge and the moire of far, dense lines.

in vec3 v_world;

layout(location = 4) uniform vec4 u_color;
layout(location = 5) uniform vec3 u_fade_center;
// Full alpha up to x metres from the centre, none beyond y; y <= 0 turns fading off.
layout(location = 6) uniform vec2 u_fade_range;

out vec4 o_color;

void main()
{
	float alpha = u_color.a;
	if (u_fade_range.y > 0.0)
		alpha *= 1.0 - smoothstep(u_fade_range.x, u_fade_range.y, distance(v_world, u_fade_center));
	o_color = vec4(u_color.rgb, alpha);
}
