// Linearised implicit Euler (Baraff and Witkin), sim/src/implicit.c, matrix-free: the
// matrix A = M - h dF/dv - h^2 dF/dx is never formed.  Per spring s a block
// S = beta I + w wᵀ (h D + h^2 K, the transverse stiffness clamped at 0 as on the CPU);
// per vertex the scalar d = m (1 + h c) + h kd_a + h^2 k_a.  (A p)_i = d_i p_i +
// sum over the springs at i of ±S (p_a - p_b), a gather.  The host runs the conjugate
// gradient loop (app/gpu_backend.c); the stages are its steps:
//   0 per spring: the blocks and g = h^2 K (v_b - v_a)
//   1 per vertex: d, the mask (0: kinematic), b = h f - h^2 k_a v + sum ±g, the 3x3
//     block-Jacobi preconditioner inverted (in double), r = mask b, s = P r, dv = 0,
//     c = s, and the partial sums of rᵀ s
//   2 per vertex: q = A c and the partial sums of cᵀ q
//   3 per vertex: dv += alpha c, r -= alpha mask q, s = P r, partial sums of rᵀ s
//   4 per vertex: c = s + beta c
//   5 per vertex: v += dv on free vertices, x += h v
// Kinematic vertices keep v = vc (the world set it; dv = vc - v = 0) and are filtered out
// of r and s, so c stays 0 there.
layout(local_size_x = GPU_GROUP) in;

layout(std140, binding = GPU_BIND_PARAMS) uniform Params { gpu_params P; };
layout(location = GPU_LOC_STAGE) uniform uint u_stage;
layout(location = GPU_LOC_SCALAR) uniform float u_scalar;
layout(std430, binding = GPU_BIND_VERTICES) readonly buffer Vertices { gpu_vertex vert[]; };
layout(std430, binding = GPU_BIND_SPRINGS) readonly buffer Springs { gpu_spring spr[]; };
layout(std430, binding = GPU_BIND_ADJACENCY) readonly buffer Adjacency { uint adj[]; };
layout(std430, binding = GPU_BIND_F) buffer Force { vec4 F[]; };
layout(std430, binding = GPU_BIND_X) buffer PosX { vec4 x[]; };
layout(std430, binding = GPU_BIND_V) buffer VelV { vec4 v[]; };
layout(std430, binding = GPU_BIND_IMPL_SPRING) buffer Blocks { vec4 blk[]; };
layout(std430, binding = GPU_BIND_IMPL_PRE) buffer Pre { vec4 pre[]; };
// the CG vectors share one binding each with other schemes' scratch
layout(std430, binding = GPU_BIND_TMP_X) buffer Res { vec4 r[]; };
layout(std430, binding = GPU_BIND_TMP_V) buffer Prec { vec4 s[]; };
layout(std430, binding = GPU_BIND_ACC_X) buffer Dir { vec4 c[]; };
layout(std430, binding = GPU_BIND_ACC_V) buffer Prod { vec4 q[]; };
layout(std430, binding = GPU_BIND_KANG_DV) buffer Dv { vec4 dv[]; };
layout(std430, binding = GPU_BIND_PARTIALS) writeonly buffer Partials { double partial[]; };

shared double part[GPU_GROUP];

// Fixed-shape tree sum of the work group's values, so a run repeats to the bit.
void reduce(double value)
{
	uint l = gl_LocalInvocationID.x;
	part[l] = value;
	// GLSL 4.30 (8.16, 8.17): barrier() orders execution; the visibility of shared writes
	// to the other invocations is memoryBarrierShared()'s.  llvmpipe runs a group as one
	// thread, a GPU as many warps with caches, so each level of the tree needs both.
	memoryBarrierShared();
	barrier();
	for (uint half_size = GPU_GROUP / 2u; half_size > 0u; half_size /= 2u) {
		if (l < half_size)
			part[l] += part[l + half_size];
		memoryBarrierShared();
		barrier();
	}
	if (l == 0u)
		partial[gl_WorkGroupID.x] = part[0];
}

double dot3(vec3 a, vec3 b)
{
	return (double(a.x) * double(b.x) + double(a.y) * double(b.y)) + double(a.z) * double(b.z);
}

// y = P r with P the symmetric block in pre[2i] (xx xy xz yy) and pre[2i+1] (yz zz).
vec3 precondition(uint i, vec3 r_i)
{
	vec4 p0 = pre[2u * i], p1 = pre[2u * i + 1u];
	precise vec3 y;
	y.x = p0.x * r_i.x + p0.y * r_i.y + p0.z * r_i.z;
	y.y = p0.y * r_i.x + p0.w * r_i.y + p1.x * r_i.z;
	y.z = p0.z * r_i.x + p1.x * r_i.y + p1.y * r_i.z;
	return y;
}

void assemble_spring(uint sidx)
{
	gpu_spring sp = spr[sidx];
	float h = P.h;
	precise float hk = h * h * sp.k;
	precise float hkd = h * sp.kd + hk;
	vec3 xa = x[sp.a].xyz, xb = x[sp.b].xyz;
	precise float dx = xb.x - xa.x, dy = xb.y - xa.y, dz = xb.z - xa.z;
	precise float l = sqrt(dx * dx + dy * dy + dz * dz + 1e-30);
	precise float inv_l = 1.0 / l;
	precise vec3 u = vec3(dx * inv_l, dy * inv_l, dz * inv_l);
	precise float t = max(1.0 - sp.rest * inv_l, 0.0);
	precise float beta = hk * t;
	precise float root = sqrt(hkd - beta);
	precise vec3 e = v[sp.b].xyz - v[sp.a].xyz;
	precise float along = (hk - beta) * (u.x * e.x + u.y * e.y + u.z * e.z);
	blk[2u * sidx] = vec4(root * u, beta);
	blk[2u * sidx + 1u] = vec4(beta * e + along * u, 0.0);
}

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (u_stage == 0u) {
		if (i < P.spring_count)
			assemble_spring(i);
		return;
	}
	bool live = i < P.vertex_count;
	double value = 0.0;
	if (live && u_stage == 1u) {
		gpu_vertex vx = vert[i];
		float h = P.h, h2 = h * h, ka = vx.rest.w;
		precise float d = vx.mass * (1.0 + h * P.air_damping) + h * vx.anchor_kd + h2 * ka;
		float mask = x[i].w != 0.0 ? 1.0 : 0.0;
		precise vec3 b = h * F[i].xyz - h2 * ka * v[i].xyz;
		// the diagonal block, in double: stiff in-plane, soft across
		double a00 = double(d), a01 = 0.0, a02 = 0.0, a11 = double(d), a12 = 0.0, a22 = double(d);
		for (uint e = vx.spring_first; e < vx.spring_first + vx.spring_count; e++) {
			uint sidx = adj[e];
			vec4 wb = blk[2u * sidx];
			vec3 g = blk[2u * sidx + 1u].xyz;
			if (spr[sidx].a == i)
				b += g;
			else
				b -= g;
			a00 += double(wb.x * wb.x + wb.w);
			a01 += double(wb.x * wb.y);
			a02 += double(wb.x * wb.z);
			a11 += double(wb.y * wb.y + wb.w);
			a12 += double(wb.y * wb.z);
			a22 += double(wb.z * wb.z + wb.w);
		}
		double c00 = a11 * a22 - a12 * a12, c01 = a02 * a12 - a01 * a22, c02 = a01 * a12 - a02 * a11;
		double c11 = a00 * a22 - a02 * a02, c12 = a01 * a02 - a00 * a12, c22 = a00 * a11 - a01 * a01;
		double det = a00 * c00 + a01 * c01 + a02 * c02;
		double f = det > 0.0 ? double(mask) / det : 0.0;
		pre[2u * i] = vec4(float(c00 * f), float(c01 * f), float(c02 * f), float(c11 * f));
		pre[2u * i + 1u] = vec4(float(c12 * f), float(c22 * f), d, mask);
		vec3 ri = mask * b;
		vec3 si = precondition(i, ri);
		r[i] = vec4(ri, 0.0);
		s[i] = vec4(si, 0.0);
		c[i] = vec4(si, 0.0);
		dv[i] = vec4(0.0);
		value = dot3(ri, si);
	} else if (live && u_stage == 2u) {
		vec3 ci = c[i].xyz;
		precise vec3 qi = pre[2u * i + 1u].z * ci;
		gpu_vertex vx = vert[i];
		for (uint e = vx.spring_first; e < vx.spring_first + vx.spring_count; e++) {
			uint sidx = adj[e];
			gpu_spring sp = spr[sidx];
			vec4 wb = blk[2u * sidx];
			precise vec3 ed = c[sp.a].xyz - c[sp.b].xyz;
			precise float we = wb.x * ed.x + wb.y * ed.y + wb.z * ed.z;
			precise vec3 t = wb.w * ed + we * wb.xyz;
			if (sp.a == i)
				qi += t;
			else
				qi -= t;
		}
		q[i] = vec4(qi, 0.0);
		value = dot3(ci, qi);
	} else if (live && u_stage == 3u) {
		float alpha = u_scalar, mask = pre[2u * i + 1u].w;
		precise vec3 dvi = dv[i].xyz + alpha * c[i].xyz;
		precise vec3 ri = r[i].xyz - alpha * (mask * q[i].xyz);
		vec3 si = precondition(i, ri);
		dv[i] = vec4(dvi, 0.0);
		r[i] = vec4(ri, 0.0);
		s[i] = vec4(si, 0.0);
		value = dot3(ri, si);
	} else if (live && u_stage == 4u) {
		precise vec3 ci = s[i].xyz + u_scalar * c[i].xyz;
		c[i] = vec4(ci, 0.0);
		return;
	} else if (live && u_stage == 5u) {
		float mask = pre[2u * i + 1u].w;
		vec4 xi = x[i], vi = v[i];
		precise vec3 vn = mask != 0.0 ? vi.xyz + dv[i].xyz : vi.xyz;
		precise vec3 xn = xi.xyz + P.h * vn;
		x[i] = vec4(xn, xi.w);
		v[i] = vec4(vn, vi.w);
		return;
	}
	if (u_stage >= 1u && u_stage <= 3u)
		reduce(value);
}
