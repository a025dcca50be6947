#version 430 core
// Blinn-Phong with a key light, a fill light and ambient, all fixed relative to the
// camera, like the headlight of the seed's Open Inventor viewer: whichever side of the
// cloth the user orbits to is lit.  The key comes from above left of the eye and the
// fill from below right, so a surface seen from above and one seen from below (a
// ceiling) are both lit, and a fold still shows as a change of shade.  Surfaces are
// two-sided: a back face is lit with the flipped normal, and the cloth's back side is
// a little greyer and darker so the user can tell the sides apart.

in vec3 v_position;
in vec3 v_normal;

layout(location = 4) uniform vec3 u_color;
// 0: the back side looks like the front (obstacles); 1: the cloth's back-side shade.
layout(location = 5) uniform float u_back_shade;

out vec4 o_color;

// Directions toward the lights, view space (x right, y up, +z toward the viewer).
const vec3 KEY_DIRECTION = vec3(-0.30, 0.40, 0.87);
const vec3 FILL_DIRECTION = vec3(0.35, -0.35, 0.87);
const float KEY_INTENSITY = 0.60;
const float FILL_INTENSITY = 0.40;
const float AMBIENT = 0.22;
const float SPECULAR = 0.20;
const float SHININESS = 48.0;

float blinn_phong(vec3 n, vec3 l, vec3 v, out float specular)
{
	l = normalize(l);
	float diffuse = max(dot(n, l), 0.0);
	vec3 h = normalize(l + v);
	// No highlight on a face turned away from the light.
	specular = diffuse > 0.0 ? pow(max(dot(n, h), 0.0), SHININESS) : 0.0;
	return diffuse;
}

void main()
{
	vec3 v = normalize(-v_position);
	// Interpolating between opposite normals (a sharp fold) can give a zero vector.
	float len = length(v_normal);
	vec3 n = len > 1e-12 ? v_normal / len : v;
	vec3 base = u_color;
	if (!gl_FrontFacing) {
		n = -n;
		float grey = dot(base, vec3(0.299, 0.587, 0.114));
		base = mix(base, vec3(grey), 0.30 * u_back_shade) * (1.0 - 0.10 * u_back_shade);
	}

	float key_specular, fill_specular;
	float key = blinn_phong(n, KEY_DIRECTION, v, key_specular);
	float fill = blinn_phong(n, FILL_DIRECTION, v, fill_specular);
	vec3 lit = base * (AMBIENT + KEY_INTENSITY * key + FILL_INTENSITY * fill)
	         + vec3(SPECULAR * (KEY_INTENSITY * key_specular + FILL_INTENSITY * fill_specular));
	o_color = vec4(min(lit, vec3(1.0)), 1.0);
}
