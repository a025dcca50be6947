/* `tela --xr`: the OpenXR session, its frame loop and the controllers (app/xr.h,
 * docs/vr.md).
 *
 * Everything runs on the main thread, whose GL context (the demo window's) is the one
 * the session was created with, as XR_KHR_opengl_enable requires: per frame
 *
 *   events -> xrWaitFrame -> xrBeginFrame -> controllers (sync, locate at the predicted
 *   display time, push into the device source, haptics) -> xrLocateViews -> both eyes
 *   into the swapchains -> xrEndFrame at that display time -> the mirror window.
 *
 * The simulation keeps its own thread and rate; the eyes draw its newest state, and the
 * controller's samples reach it through the demo's device thread within one step, as a
 * Polhemus's do. */
#define _POSIX_C_SOURCE 200809L
#define XR_USE_PLATFORM_XLIB
#define XR_USE_GRAPHICS_API_OPENGL
#include "xr.h"

#include "cli.h"
#include "demo.h"
#include "device_thread.h"
#include "stop.h"

#include "devices/device.h"
#include "tracking/tracking.h"

#include <GL/glew.h>
#include <GL/glx.h>
#include <X11/Xlib.h>
#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>
#include <openxr/openxr_reflection.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The haptic amplitude for a coupling force F is F / (F + HAPTIC_HALF_N): zero with no
 * load, a half at a newton (a firm hand-held pull of a small cloth), saturating, never
 * clipped, so every change of force is still felt as a change of strength. */
static const float HAPTIC_HALF_N = 1.0f;
/* Each pulse lasts a little longer than a frame, so a steady hold is one steady buzz. */
static const XrDuration HAPTIC_PULSE_NS = 100000000;
/* The controller's pointer tip sits this far ahead of the grip, along the grip's -z (the
 * direction the fist points, OpenXR's grip pose): the cone appears just in front of the
 * hand, and the tip direction (trk_tip_direction) is that axis. */
static const float CONTROLLER_TIP_M = 0.05f;
/* A LOCAL space's origin is at the user's eyes; the world's floor is this far below. */
static const float LOCAL_EYE_HEIGHT_M = 1.6f;

enum { MAX_VIEWS = 2, MAX_IMAGES = 8, MAX_STATES = 64 };

typedef struct eye {
	XrSwapchain swapchain;
	int width, height;
	uint32_t image_count;
	GLuint images[MAX_IMAGES];
	GLuint framebuffer, depth;
} eye;

typedef struct xr_app {
	const xr_options *options;
	char manifest[4096]; /* the runtime's, as the loader will find it */
	XrInstance instance;
	XrSystemId system;
	XrSession session;
	XrSpace space;          /* stage, or local */
	bool stage;
	XrViewConfigurationView configs[MAX_VIEWS];
	uint32_t view_count;
	XrEnvironmentBlendMode blend;
	eye eyes[MAX_VIEWS];
	int64_t format;
	GLuint mirror, mirror_texture; /* the left eye, copied for the window */
	/* the session */
	XrSessionState state;
	bool running, exit_requested, done, lost;
	bool instance_lost; /* then xrDestroyInstance is the only call left to make */
	char states[MAX_STATES * 16];
	/* the controllers */
	XrActionSet actions;
	XrAction grip, select, haptic;
	XrPath hands[2];
	XrSpace grip_spaces[2];
	int profiles; /* interaction profiles the runtime accepted */
	bool haptic_on;
	/* the world */
	float stage_rotation[4], stage_translation[3]; /* stage (or local) to world */
	trk_calibration calibration; /* the pointer's source to the world */
	demo *demo;
	dev_source *controller; /* the push source, in the stage's frame */
	dev_sample last_pushed; /* its newest sample (buttons set: a press is on) */
	/* for the summary */
	char runtime[XR_MAX_RUNTIME_NAME_SIZE], system_name[XR_MAX_SYSTEM_NAME_SIZE];
	int64_t frames_submitted, frames_rendered, frames_waited;
	XrDuration period;
	uint64_t poses_pushed;
	int haptic_requests;
	float peak_amplitude, peak_force;
	int grab_vertex;
	float grab_start_y, grab_rise;
} xr_app;

/* ---- messages --------------------------------------------------------------------------------- */

/* The results' names come from the installed headers' own list, not xrResultToString:
 * that needs a live instance, and the failures that most need explaining (the loader
 * finding no runtime library, a runtime that died) come before one exists or after it
 * is gone. */
static const struct {
	XrResult code;
	const char *name;
} RESULT_NAMES[] = {
#define RESULT_NAME(name, value) {name, #name},
    XR_LIST_ENUM_XrResult(RESULT_NAME)
#undef RESULT_NAME
};

enum { RESULT_TEXT_SIZE = XR_MAX_RESULT_STRING_SIZE + 16 };

/* "XR_ERROR_RUNTIME_UNAVAILABLE (-51)": the name to look up, the number for a code the
 * headers do not know (a newer runtime's). */
static const char *result_name(XrResult r, char buffer[RESULT_TEXT_SIZE])
{
	for (size_t i = 0; i < sizeof RESULT_NAMES / sizeof *RESULT_NAMES; i++)
		if (RESULT_NAMES[i].code == r) {
			snprintf(buffer, RESULT_TEXT_SIZE, "%s (%d)", RESULT_NAMES[i].name, (int)r);
			return buffer;
		}
	snprintf(buffer, RESULT_TEXT_SIZE, "unknown XrResult %d", (int)r);
	return buffer;
}

/* True for a result that says the session or the whole instance is gone (a headset
 * unplugged, a runtime's service that died, often with no event first): the run ends
 * as for LOSS_PENDING, and nothing more is asked of what was lost. */
static bool lost(xr_app *x, XrResult r)
{
	if (r != XR_ERROR_SESSION_LOST && r != XR_ERROR_INSTANCE_LOST)
		return false;
	x->lost = x->done = true;
	x->running = false;
	if (r == XR_ERROR_INSTANCE_LOST)
		x->instance_lost = true;
	return true;
}

/* False (with a message) for a failed call; a loss is said once, at the end of the run. */
static bool ok(xr_app *x, XrResult r, const char *what)
{
	if (XR_SUCCEEDED(r))
		return true;
	if (lost(x, r))
		return false;
	char name[RESULT_TEXT_SIZE];
	fprintf(stderr, "tela --xr: %s failed: %s\n", what, result_name(r, name));
	return false;
}

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Where Debian's loader (1.0.20) looks for the active runtime, in its order, when
 * XR_RUNTIME_JSON is not set: the first that exists (into found), or false with the
 * list. */
static bool find_active_runtime(char *looked, size_t size, char *found, size_t found_size)
{
	const char *suffix = "/openxr/1/active_runtime.json";
	char candidates[8][1024];
	int n = 0;
	const char *config_home = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (config_home && *config_home)
		snprintf(candidates[n++], sizeof candidates[0], "%s%s", config_home, suffix);
	else if (home && *home)
		snprintf(candidates[n++], sizeof candidates[0], "%s/.config%s", home, suffix);
	const char *dirs = getenv("XDG_CONFIG_DIRS");
	char list[2048];
	snprintf(list, sizeof list, "%s", dirs && *dirs ? dirs : "/etc/xdg");
	for (char *save = NULL, *dir = strtok_r(list, ":", &save); dir && n < 7; dir = strtok_r(NULL, ":", &save))
		snprintf(candidates[n++], sizeof candidates[0], "%s%s", dir, suffix);
	snprintf(candidates[n++], sizeof candidates[0], "/etc%s", suffix);
	looked[0] = 0;
	for (int i = 0; i < n; i++) {
		if (file_exists(candidates[i])) {
			snprintf(found, found_size, "%s", candidates[i]);
			return true;
		}
		size_t used = strlen(looked);
		snprintf(looked + used, size - used, "%s%s", i ? ", " : "", candidates[i]);
	}
	return false;
}

/* Explains what is missing before the loader is asked, since its own message goes to
 * its log and says only "no runtime".  False when nothing can work; else the manifest
 * the loader will read, for the messages when its runtime does not start. */
static bool runtime_present(char *manifest, size_t size)
{
	const char *json = getenv("XR_RUNTIME_JSON");
	if (json && *json) {
		if (file_exists(json)) {
			snprintf(manifest, size, "%s", json);
			return true;
		}
		fprintf(stderr,
		        "tela --xr: XR_RUNTIME_JSON points to '%s', which does not exist: set it to a runtime's "
		        "manifest (e.g. Monado's or SteamVR's), or unset it to use the system's active runtime "
		        "(docs/vr.md)\n",
		        json);
		return false;
	}
	char looked[4096];
	if (find_active_runtime(looked, sizeof looked, manifest, size))
		return true;
	fprintf(stderr,
	        "tela --xr: no OpenXR runtime is installed: Debian's OpenXR loader found no active runtime (looked "
	        "for %s) and XR_RUNTIME_JSON is not set.  Install and start a runtime (Monado, SteamVR, the "
	        "headset vendor's), or set XR_RUNTIME_JSON to a runtime's manifest (docs/vr.md)\n",
	        looked);
	return false;
}

/* ---- pose algebra ----------------------------------------------------------------------------- */

static void qmul(const float a[4], const float b[4], float o[4])
{
	float r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
	              a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
	              a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
	              a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
	memcpy(o, r, sizeof r);
}

static void qrot(const float q[4], const float v[3], float o[3])
{
	float c[3] = {q[1] * v[2] - q[2] * v[1], q[2] * v[0] - q[0] * v[2], q[0] * v[1] - q[1] * v[0]};
	float cc[3] = {q[1] * c[2] - q[2] * c[1], q[2] * c[0] - q[0] * c[2], q[0] * c[1] - q[1] * c[0]};
	for (int k = 0; k < 3; k++)
		o[k] = v[k] + 2.0f * (q[3] * c[k] + cc[k]);
}

/* What to add to a pose's height in the session's space to get the height over the floor:
 * 0 in a stage, whose origin is on the floor; a LOCAL space's origin is at the eyes. */
static float floor_offset(const xr_app *x) { return x->stage ? 0.0f : LOCAL_EYE_HEIGHT_M; }

/* A pose of the session's space into the world: p_w = R p + t, q_w = R q. */
static void stage_to_world(const xr_app *x, const XrPosef *pose, float position[3], float orientation[4])
{
	float p[3] = {pose->position.x, pose->position.y + floor_offset(x), pose->position.z};
	float q[4] = {pose->orientation.x, pose->orientation.y, pose->orientation.z, pose->orientation.w};
	qrot(x->stage_rotation, p, position);
	for (int k = 0; k < 3; k++)
		position[k] += x->stage_translation[k];
	qmul(x->stage_rotation, q, orientation);
}

/* The user stands where the scene's camera is, on the floor (world y = 0), facing what
 * it looks at: stage -z (forward) turned onto the camera's horizontal direction of view,
 * at scale 1, so that a metre of cloth is a metre in the headset. */
static void place_stage(xr_app *x, const st_layout *l)
{
	float fx = l->camera_target[0] - l->camera_position[0], fz = l->camera_target[2] - l->camera_position[2];
	float yaw = fx * fx + fz * fz > 1e-12f ? atan2f(-fx, -fz) : 0.0f;
	x->stage_rotation[0] = 0.0f, x->stage_rotation[1] = sinf(0.5f * yaw), x->stage_rotation[2] = 0.0f;
	x->stage_rotation[3] = cosf(0.5f * yaw);
	x->stage_translation[0] = l->camera_position[0];
	x->stage_translation[1] = 0.0f;
	x->stage_translation[2] = l->camera_position[2];
}

/* The stage's mapping as a tracker calibration after `first` (device to stage): world =
 * t_s + R_s (t + s R (p + q tip)) = (t_s + R_s t) + s (R_s R)(p + q tip). */
static trk_calibration then_stage(const xr_app *x, const trk_calibration *first)
{
	trk_calibration c = *first;
	qmul(x->stage_rotation, first->rotation, c.rotation);
	qrot(x->stage_rotation, first->translation, c.translation);
	for (int k = 0; k < 3; k++)
		c.translation[k] += x->stage_translation[k];
	return c;
}

/* The view matrix of an eye at a world pose: the inverse of [R | p]. */
static void view_matrix(const float p[3], const float q[4], float m[16])
{
	float inv[4] = {-q[0], -q[1], -q[2], q[3]};
	float axes[3][3], e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	for (int i = 0; i < 3; i++)
		qrot(inv, e[i], axes[i]); /* axes[i] = R^T e_i: column i of R^T */
	float t[3];
	qrot(inv, p, t);
	memset(m, 0, 16 * sizeof *m);
	for (int c = 0; c < 3; c++)
		for (int r = 0; r < 3; r++)
			m[c * 4 + r] = axes[c][r];
	for (int r = 0; r < 3; r++)
		m[12 + r] = -t[r];
	m[15] = 1.0f;
}

/* OpenGL's off-axis projection for an OpenXR field of view (angles in radians, left and
 * down negative), clip planes as the desktop renderer's. */
static void projection_matrix(const XrFovf *fov, float m[16])
{
	const float n = 0.01f, f = 200.0f;
	float l = tanf(fov->angleLeft), r = tanf(fov->angleRight), u = tanf(fov->angleUp), d = tanf(fov->angleDown);
	memset(m, 0, 16 * sizeof *m);
	m[0] = 2.0f / (r - l);
	m[5] = 2.0f / (u - d);
	m[8] = (r + l) / (r - l);
	m[9] = (u + d) / (u - d);
	m[10] = -(f + n) / (f - n);
	m[11] = -1.0f;
	m[14] = -2.0f * f * n / (f - n);
}

/* ---- set-up ----------------------------------------------------------------------------------- */

/* The loader loads the runtime at its first call (listing the extensions), so a
 * manifest naming a library that is not there fails there, before any instance. */
static void could_not_start(const xr_app *x, const char *call, XrResult r)
{
	char name[RESULT_TEXT_SIZE];
	fprintf(stderr, "tela --xr: the OpenXR runtime could not start (%s: %s): ", call, result_name(r, name));
	if (r == XR_ERROR_RUNTIME_UNAVAILABLE)
		fprintf(stderr, "is the library its manifest '%s' names there, and its service (if it has one) running?",
		        x->manifest);
	else if (r == XR_ERROR_RUNTIME_FAILURE)
		fprintf(stderr, "is its service running? (its manifest: '%s')", x->manifest);
	else
		fprintf(stderr, "its manifest is '%s'", x->manifest);
	fprintf(stderr, " (docs/vr.md)\n");
}

static bool create_instance(xr_app *x)
{
	uint32_t count = 0;
	XrResult r = xrEnumerateInstanceExtensionProperties(NULL, 0, &count, NULL);
	if (XR_FAILED(r)) {
		could_not_start(x, "xrEnumerateInstanceExtensionProperties", r);
		return false;
	}
	XrExtensionProperties *props = calloc(count ? count : 1, sizeof *props);
	if (!props)
		return false;
	for (uint32_t i = 0; i < count; i++)
		props[i].type = XR_TYPE_EXTENSION_PROPERTIES;
	r = xrEnumerateInstanceExtensionProperties(NULL, count, &count, props);
	bool gl = false;
	for (uint32_t i = 0; XR_SUCCEEDED(r) && i < count; i++)
		gl = gl || strcmp(props[i].extensionName, XR_KHR_OPENGL_ENABLE_EXTENSION_NAME) == 0;
	free(props);
	if (XR_FAILED(r)) {
		could_not_start(x, "xrEnumerateInstanceExtensionProperties", r);
		return false;
	}
	if (!gl) {
		fprintf(stderr, "tela --xr: the OpenXR runtime does not offer %s (OpenGL rendering), which tela needs\n",
		        XR_KHR_OPENGL_ENABLE_EXTENSION_NAME);
		return false;
	}
	const char *extensions[] = {XR_KHR_OPENGL_ENABLE_EXTENSION_NAME};
	XrInstanceCreateInfo info = {.type = XR_TYPE_INSTANCE_CREATE_INFO,
	                             .enabledExtensionCount = 1,
	                             .enabledExtensionNames = extensions};
	snprintf(info.applicationInfo.applicationName, sizeof info.applicationInfo.applicationName, "tela");
	info.applicationInfo.applicationVersion = 1;
	snprintf(info.applicationInfo.engineName, sizeof info.applicationInfo.engineName, "tela");
	info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
	r = xrCreateInstance(&info, &x->instance);
	if (XR_FAILED(r)) {
		x->instance = XR_NULL_HANDLE;
		could_not_start(x, "xrCreateInstance", r);
		return false;
	}
	XrInstanceProperties ip = {.type = XR_TYPE_INSTANCE_PROPERTIES};
	r = xrGetInstanceProperties(x->instance, &ip);
	if (XR_SUCCEEDED(r))
		snprintf(x->runtime, sizeof x->runtime, "%s", ip.runtimeName);
	return !lost(x, r);
}

static bool get_system(xr_app *x)
{
	XrSystemGetInfo info = {.type = XR_TYPE_SYSTEM_GET_INFO, .formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY};
	XrResult r = xrGetSystem(x->instance, &info, &x->system);
	if (r == XR_ERROR_FORM_FACTOR_UNAVAILABLE) {
		fprintf(stderr, "tela --xr: the OpenXR runtime '%s' sees no headset: connect and switch it on\n",
		        x->runtime);
		return false;
	}
	if (!ok(x, r, "finding a head-mounted display (xrGetSystem)"))
		return false;
	XrSystemProperties sp = {.type = XR_TYPE_SYSTEM_PROPERTIES};
	r = xrGetSystemProperties(x->instance, x->system, &sp);
	if (XR_SUCCEEDED(r))
		snprintf(x->system_name, sizeof x->system_name, "%s", sp.systemName);
	if (lost(x, r))
		return false;
	uint32_t n = 0;
	r = xrEnumerateViewConfigurationViews(x->instance, x->system, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, 0, &n,
	                                      NULL);
	if (!ok(x, r, "the headset's stereo views (xrEnumerateViewConfigurationViews)"))
		return false;
	if (n != 2) {
		fprintf(stderr, "tela --xr: the headset reports %u stereo views, not 2\n", n);
		return false;
	}
	for (uint32_t i = 0; i < n; i++)
		x->configs[i].type = XR_TYPE_VIEW_CONFIGURATION_VIEW;
	r = xrEnumerateViewConfigurationViews(x->instance, x->system, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, n, &n,
	                                      x->configs);
	if (!ok(x, r, "the headset's stereo views"))
		return false;
	x->view_count = n;
	XrEnvironmentBlendMode modes[8];
	uint32_t m = 0;
	r = xrEnumerateEnvironmentBlendModes(x->instance, x->system, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, 8, &m,
	                                     modes);
	if (!ok(x, r, "the headset's blend modes (xrEnumerateEnvironmentBlendModes)") || m == 0)
		return false;
	x->blend = modes[0];
	for (uint32_t i = 0; i < m; i++)
		if (modes[i] == XR_ENVIRONMENT_BLEND_MODE_OPAQUE)
			x->blend = modes[i];
	return true;
}

static bool check_gl_requirements(xr_app *x)
{
	PFN_xrGetOpenGLGraphicsRequirementsKHR get = NULL;
	XrResult r = xrGetInstanceProcAddr(x->instance, "xrGetOpenGLGraphicsRequirementsKHR", (PFN_xrVoidFunction *)&get);
	if (!ok(x, r, "xrGetOpenGLGraphicsRequirementsKHR"))
		return false;
	XrGraphicsRequirementsOpenGLKHR req = {.type = XR_TYPE_GRAPHICS_REQUIREMENTS_OPENGL_KHR};
	if (!ok(x, get(x->instance, x->system, &req), "the runtime's OpenGL requirements"))
		return false;
	GLint major = 0, minor = 0;
	glGetIntegerv(GL_MAJOR_VERSION, &major);
	glGetIntegerv(GL_MINOR_VERSION, &minor);
	XrVersion have = XR_MAKE_VERSION(major, minor, 0);
	if (have < req.minApiVersionSupported) {
		fprintf(stderr, "tela --xr: the runtime needs OpenGL %u.%u, the window has %d.%d\n",
		        XR_VERSION_MAJOR(req.minApiVersionSupported), XR_VERSION_MINOR(req.minApiVersionSupported), major,
		        minor);
		return false;
	}
	return true;
}

/* The session over the window's GLX context (current on this thread). */
static bool create_session(xr_app *x)
{
	Display *display = glXGetCurrentDisplay();
	GLXContext context = glXGetCurrentContext();
	GLXDrawable drawable = glXGetCurrentDrawable();
	if (!display || !context || !drawable) {
		fprintf(stderr, "tela --xr: the window has no GLX context (XR_KHR_opengl_enable needs Xlib/GLX): run "
		                "under X11 (not Wayland, not SDL's offscreen driver)\n");
		return false;
	}
	int id = 0, screen = 0;
	glXQueryContext(display, context, GLX_FBCONFIG_ID, &id);
	glXQueryContext(display, context, GLX_SCREEN, &screen);
	int attributes[] = {GLX_FBCONFIG_ID, id, None};
	int n = 0;
	GLXFBConfig *configs = glXChooseFBConfig(display, screen, attributes, &n);
	if (!configs || n < 1) {
		fprintf(stderr, "tela --xr: the window's GLX framebuffer configuration was not found\n");
		if (configs)
			XFree(configs);
		return false;
	}
	XrGraphicsBindingOpenGLXlibKHR binding = {.type = XR_TYPE_GRAPHICS_BINDING_OPENGL_XLIB_KHR,
	                                          .xDisplay = display,
	                                          .glxFBConfig = configs[0],
	                                          .glxDrawable = drawable,
	                                          .glxContext = context};
	XVisualInfo *visual = glXGetVisualFromFBConfig(display, configs[0]);
	if (visual) {
		binding.visualid = (uint32_t)visual->visualid;
		XFree(visual);
	}
	XrSessionCreateInfo info = {.type = XR_TYPE_SESSION_CREATE_INFO, .next = &binding, .systemId = x->system};
	XrResult r = xrCreateSession(x->instance, &info, &x->session);
	XFree(configs);
	return ok(x, r, "starting a session (xrCreateSession)");
}

static bool create_space(xr_app *x)
{
	XrReferenceSpaceType types[16];
	uint32_t n = 0;
	if (!ok(x, xrEnumerateReferenceSpaces(x->session, 16, &n, types), "xrEnumerateReferenceSpaces"))
		return false;
	for (uint32_t i = 0; i < n; i++)
		x->stage = x->stage || types[i] == XR_REFERENCE_SPACE_TYPE_STAGE;
	XrReferenceSpaceCreateInfo info = {.type = XR_TYPE_REFERENCE_SPACE_CREATE_INFO,
	                                   .referenceSpaceType =
	                                       x->stage ? XR_REFERENCE_SPACE_TYPE_STAGE : XR_REFERENCE_SPACE_TYPE_LOCAL,
	                                   .poseInReferenceSpace = {.orientation = {0, 0, 0, 1}}};
	return ok(x, xrCreateReferenceSpace(x->session, &info, &x->space), "xrCreateReferenceSpace");
}

static XrPath path(xr_app *x, const char *text)
{
	XrPath p = XR_NULL_PATH;
	xrStringToPath(x->instance, text, &p);
	return p;
}

static bool create_action(xr_app *x, XrAction *out, const char *name, const char *label, XrActionType type)
{
	XrActionCreateInfo info = {.type = XR_TYPE_ACTION_CREATE_INFO,
	                           .actionType = type,
	                           .countSubactionPaths = 2,
	                           .subactionPaths = x->hands};
	snprintf(info.actionName, sizeof info.actionName, "%s", name);
	snprintf(info.localizedActionName, sizeof info.localizedActionName, "%s", label);
	return ok(x, xrCreateAction(x->actions, &info, out), "xrCreateAction");
}

/* Suggests one profile's bindings: grip pose, a button that grabs, the haptic output;
 * a profile the runtime does not know is skipped. */
static bool suggest(xr_app *x, const char *profile, const char *button)
{
	static const char *const side[2] = {"left", "right"};
	XrActionSuggestedBinding b[6];
	char text[128];
	for (int h = 0; h < 2; h++) {
		snprintf(text, sizeof text, "/user/hand/%s/input/grip/pose", side[h]);
		b[3 * h] = (XrActionSuggestedBinding){x->grip, path(x, text)};
		snprintf(text, sizeof text, "/user/hand/%s/input/%s", side[h], button);
		b[3 * h + 1] = (XrActionSuggestedBinding){x->select, path(x, text)};
		snprintf(text, sizeof text, "/user/hand/%s/output/haptic", side[h]);
		b[3 * h + 2] = (XrActionSuggestedBinding){x->haptic, path(x, text)};
	}
	XrInteractionProfileSuggestedBinding s = {.type = XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING,
	                                          .interactionProfile = path(x, profile),
	                                          .countSuggestedBindings = 6,
	                                          .suggestedBindings = b};
	XrResult r = xrSuggestInteractionProfileBindings(x->instance, &s);
	if (r == XR_ERROR_PATH_UNSUPPORTED)
		return true;
	if (!ok(x, r, profile))
		return false;
	x->profiles++;
	return true;
}

static bool create_actions(xr_app *x)
{
	x->hands[0] = path(x, "/user/hand/left");
	x->hands[1] = path(x, "/user/hand/right");
	XrActionSetCreateInfo set = {.type = XR_TYPE_ACTION_SET_CREATE_INFO};
	snprintf(set.actionSetName, sizeof set.actionSetName, "cloth");
	snprintf(set.localizedActionSetName, sizeof set.localizedActionSetName, "Cloth");
	if (!ok(x, xrCreateActionSet(x->instance, &set, &x->actions), "xrCreateActionSet") ||
	    !create_action(x, &x->grip, "grip", "Hand pose", XR_ACTION_TYPE_POSE_INPUT) ||
	    !create_action(x, &x->select, "grab", "Grab", XR_ACTION_TYPE_BOOLEAN_INPUT) ||
	    !create_action(x, &x->haptic, "pull", "Pull feedback", XR_ACTION_TYPE_VIBRATION_OUTPUT))
		return false;
	/* every profile of the core specification with a trigger-like button (a float
	 * trigger bound to a boolean action is thresholded by the runtime) */
	if (!suggest(x, "/interaction_profiles/khr/simple_controller", "select/click") ||
	    !suggest(x, "/interaction_profiles/oculus/touch_controller", "trigger/value") ||
	    !suggest(x, "/interaction_profiles/valve/index_controller", "trigger/click") ||
	    !suggest(x, "/interaction_profiles/htc/vive_controller", "trigger/click") ||
	    !suggest(x, "/interaction_profiles/microsoft/motion_controller", "trigger/value"))
		return false;
	if (x->profiles == 0)
		fprintf(stderr, "tela --xr: the runtime accepted no controller profile: the controllers do nothing\n");
	XrSessionActionSetsAttachInfo attach = {
	    .type = XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO, .countActionSets = 1, .actionSets = &x->actions};
	if (!ok(x, xrAttachSessionActionSets(x->session, &attach), "xrAttachSessionActionSets"))
		return false;
	for (int h = 0; h < 2; h++) {
		XrActionSpaceCreateInfo info = {.type = XR_TYPE_ACTION_SPACE_CREATE_INFO,
		                                .action = x->grip,
		                                .subactionPath = x->hands[h],
		                                .poseInActionSpace = {.orientation = {0, 0, 0, 1}}};
		if (!ok(x, xrCreateActionSpace(x->session, &info, &x->grip_spaces[h]), "xrCreateActionSpace"))
			return false;
	}
	return true;
}

static const char *format_name(int64_t f) { return f == GL_SRGB8_ALPHA8 ? "GL_SRGB8_ALPHA8" : "GL_RGBA8"; }

static bool create_swapchains(xr_app *x)
{
	int64_t formats[64];
	uint32_t n = 0;
	if (!ok(x, xrEnumerateSwapchainFormats(x->session, 64, &n, formats), "xrEnumerateSwapchainFormats"))
		return false;
	/* The renderer writes display-ready (gamma-encoded) colours, as into the window: an
	 * sRGB image with GL_FRAMEBUFFER_SRGB off stores them unchanged and the compositor
	 * reads them as sRGB, so the headset shows what the window shows. */
	x->format = 0;
	for (uint32_t i = 0; i < n && !x->format; i++)
		if (formats[i] == GL_SRGB8_ALPHA8 || formats[i] == GL_RGBA8)
			x->format = formats[i];
	if (!x->format) {
		fprintf(stderr, "tela --xr: the runtime offers no 8-bit RGBA swapchain format\n");
		return false;
	}
	for (uint32_t v = 0; v < x->view_count; v++) {
		eye *e = &x->eyes[v];
		e->width = (int)x->configs[v].recommendedImageRectWidth;
		e->height = (int)x->configs[v].recommendedImageRectHeight;
		XrSwapchainCreateInfo info = {.type = XR_TYPE_SWAPCHAIN_CREATE_INFO,
		                              .usageFlags = XR_SWAPCHAIN_USAGE_COLOR_ATTACHMENT_BIT |
		                                            XR_SWAPCHAIN_USAGE_TRANSFER_SRC_BIT,
		                              .format = x->format,
		                              .sampleCount = 1,
		                              .width = (uint32_t)e->width,
		                              .height = (uint32_t)e->height,
		                              .faceCount = 1,
		                              .arraySize = 1,
		                              .mipCount = 1};
		if (!ok(x, xrCreateSwapchain(x->session, &info, &e->swapchain), "xrCreateSwapchain"))
			return false;
		XrSwapchainImageOpenGLKHR images[MAX_IMAGES];
		for (int i = 0; i < MAX_IMAGES; i++)
			images[i] = (XrSwapchainImageOpenGLKHR){.type = XR_TYPE_SWAPCHAIN_IMAGE_OPENGL_KHR};
		if (!ok(x, xrEnumerateSwapchainImages(e->swapchain, 0, &e->image_count, NULL), "xrEnumerateSwapchainImages"))
			return false;
		if (e->image_count > MAX_IMAGES) {
			fprintf(stderr, "tela --xr: the runtime's swapchain has %u images, more than %d\n", e->image_count,
			        MAX_IMAGES);
			return false;
		}
		if (!ok(x,
		        xrEnumerateSwapchainImages(e->swapchain, e->image_count, &e->image_count,
		                                   (XrSwapchainImageBaseHeader *)images),
		        "xrEnumerateSwapchainImages"))
			return false;
		for (uint32_t i = 0; i < e->image_count; i++)
			e->images[i] = images[i].image;
		glGenFramebuffers(1, &e->framebuffer);
		glGenRenderbuffers(1, &e->depth);
		glBindRenderbuffer(GL_RENDERBUFFER, e->depth);
		glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, e->width, e->height);
		glBindRenderbuffer(GL_RENDERBUFFER, 0);
	}
	/* the mirror: the left eye, copied before its image goes back to the runtime */
	glGenTextures(1, &x->mirror_texture);
	glBindTexture(GL_TEXTURE_2D, x->mirror_texture);
	glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, x->eyes[0].width, x->eyes[0].height);
	glBindTexture(GL_TEXTURE_2D, 0);
	glGenFramebuffers(1, &x->mirror);
	glBindFramebuffer(GL_FRAMEBUFFER, x->mirror);
	glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, x->mirror_texture, 0);
	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	return true;
}

/* After an instance loss the runtime answers nothing but xrDestroyInstance, which
 * takes every child handle with it: the GL objects go, the OpenXR children are only
 * forgotten. */
static void destroy(xr_app *x)
{
	bool children = !x->instance_lost;
	for (uint32_t v = 0; v < MAX_VIEWS; v++) {
		eye *e = &x->eyes[v];
		if (e->swapchain && children)
			xrDestroySwapchain(e->swapchain);
		if (e->framebuffer)
			glDeleteFramebuffers(1, &e->framebuffer);
		if (e->depth)
			glDeleteRenderbuffers(1, &e->depth);
		memset(e, 0, sizeof *e);
	}
	if (x->mirror)
		glDeleteFramebuffers(1, &x->mirror);
	if (x->mirror_texture)
		glDeleteTextures(1, &x->mirror_texture);
	x->mirror = x->mirror_texture = 0;
	for (int h = 0; h < 2; h++)
		if (x->grip_spaces[h] && children)
			xrDestroySpace(x->grip_spaces[h]);
	if (x->actions && children)
		xrDestroyActionSet(x->actions); /* and its actions */
	if (x->space && children)
		xrDestroySpace(x->space);
	if (x->session && children)
		xrDestroySession(x->session);
	if (x->instance)
		xrDestroyInstance(x->instance);
	memset(x->grip_spaces, 0, sizeof x->grip_spaces);
	x->actions = XR_NULL_HANDLE, x->space = XR_NULL_HANDLE;
	x->session = XR_NULL_HANDLE, x->instance = XR_NULL_HANDLE;
}

/* ---- the session's states --------------------------------------------------------------------- */

static const char *state_name(XrSessionState s)
{
	switch (s) {
	case XR_SESSION_STATE_IDLE: return "IDLE";
	case XR_SESSION_STATE_READY: return "READY";
	case XR_SESSION_STATE_SYNCHRONIZED: return "SYNCHRONIZED";
	case XR_SESSION_STATE_VISIBLE: return "VISIBLE";
	case XR_SESSION_STATE_FOCUSED: return "FOCUSED";
	case XR_SESSION_STATE_STOPPING: return "STOPPING";
	case XR_SESSION_STATE_LOSS_PENDING: return "LOSS_PENDING";
	case XR_SESSION_STATE_EXITING: return "EXITING";
	default: return "UNKNOWN";
	}
}

static void request_exit(xr_app *x)
{
	if (x->exit_requested)
		return;
	x->exit_requested = true;
	if (x->running)
		xrRequestExitSession(x->session); /* the runtime then goes to STOPPING */
	else
		x->done = true;
}

static void handle_state(xr_app *x, XrSessionState s)
{
	x->state = s;
	size_t used = strlen(x->states);
	snprintf(x->states + used, sizeof x->states - used, "%s%s", used ? " " : "", state_name(s));
	switch (s) {
	case XR_SESSION_STATE_READY:
		if (!x->running) {
			XrSessionBeginInfo info = {.type = XR_TYPE_SESSION_BEGIN_INFO,
			                           .primaryViewConfigurationType = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO};
			if (ok(x, xrBeginSession(x->session, &info), "xrBeginSession"))
				x->running = true;
			else
				x->done = true;
			if (x->exit_requested && x->running)
				xrRequestExitSession(x->session);
		}
		break;
	case XR_SESSION_STATE_STOPPING:
		if (x->running)
			ok(x, xrEndSession(x->session), "xrEndSession");
		x->running = false;
		break;
	case XR_SESSION_STATE_EXITING: x->done = true; break;
	case XR_SESSION_STATE_LOSS_PENDING:
		/* the headset is going (unplugged, the runtime stopping): the session cannot
		 * continue; tela ends and says so rather than wait for it to come back */
		x->lost = true;
		x->done = true;
		x->running = false;
		break;
	default: break;
	}
}

static void poll_events(xr_app *x)
{
	while (!x->instance_lost) {
		XrEventDataBuffer e = {.type = XR_TYPE_EVENT_DATA_BUFFER};
		XrResult r = xrPollEvent(x->instance, &e);
		if (r != XR_SUCCESS) {
			lost(x, r);
			return;
		}
		if (e.type == XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED)
			handle_state(x, ((XrEventDataSessionStateChanged *)&e)->state);
		else if (e.type == XR_TYPE_EVENT_DATA_INSTANCE_LOSS_PENDING)
			x->lost = x->done = true;
	}
}

/* ---- the controllers -------------------------------------------------------------------------- */

static float haptic_amplitude(float force) { return force / (force + HAPTIC_HALF_N); }

/* Syncs the actions and pushes the grabbing hand's pose and button into the source. */
static void controllers(xr_app *x, XrTime t)
{
	if (!x->controller)
		return;
	if (x->state != XR_SESSION_STATE_FOCUSED) {
		/* the runtime keeps the input (a system menu is up, the headset is off): a held
		 * vertex is let go where the hand last was, rather than held until focus returns */
		if (x->last_pushed.buttons) {
			x->last_pushed.buttons = 0;
			x->last_pushed.t_ns = 0;
			dev_push(x->controller, &x->last_pushed);
		}
		dev_push_set_state(x->controller, DEV_WAITING, "the session is not focused");
		return;
	}
	XrActiveActionSet active = {x->actions, XR_NULL_PATH};
	XrActionsSyncInfo sync = {.type = XR_TYPE_ACTIONS_SYNC_INFO, .countActiveActionSets = 1, .activeActionSets = &active};
	XrResult r = xrSyncActions(x->session, &sync);
	if (r != XR_SUCCESS) { /* XR_SESSION_NOT_FOCUSED: nothing to read */
		lost(x, r);
		return;
	}
	int h = x->options->hand;
	XrActionStateGetInfo get = {.type = XR_TYPE_ACTION_STATE_GET_INFO, .action = x->grip, .subactionPath = x->hands[h]};
	XrActionStatePose pose = {.type = XR_TYPE_ACTION_STATE_POSE};
	XrActionStateBoolean button = {.type = XR_TYPE_ACTION_STATE_BOOLEAN};
	XrSpaceLocation where = {.type = XR_TYPE_SPACE_LOCATION};
	r = xrGetActionStatePose(x->session, &get, &pose);
	bool have = XR_SUCCEEDED(r) && pose.isActive;
	get.action = x->select;
	if (XR_SUCCEEDED(r))
		have = have && XR_SUCCEEDED(r = xrGetActionStateBoolean(x->session, &get, &button));
	if (XR_SUCCEEDED(r))
		have = have && XR_SUCCEEDED(r = xrLocateSpace(x->grip_spaces[h], x->space, t, &where));
	if (lost(x, r))
		return;
	const XrSpaceLocationFlags needed = XR_SPACE_LOCATION_POSITION_VALID_BIT | XR_SPACE_LOCATION_ORIENTATION_VALID_BIT;
	if (!have || (where.locationFlags & needed) != needed) {
		dev_push_set_state(x->controller, DEV_WAITING, h ? "right controller not tracked" : "left controller not tracked");
		return;
	}
	/* The push source is in the stage's frame; the calibration (the stage's mapping, with
	 * the tip ahead of the grip) takes it to the world.  A press goes in only where it
	 * grabs (the pointer near the cloth, as of the device thread's last update): a press
	 * elsewhere would engage the tracker's clutch, which in a headset would part the
	 * pointer from the hand.  Once in, it stays in until the trigger is let go, whatever
	 * the device thread has caught up with. */
	dt_status ds;
	bool near = demo_device_status(x->demo, &ds, NULL, 0) && (ds.output.hover >= 0 || ds.output.grabbed >= 0);
	bool pressed = button.currentState && (near || x->last_pushed.buttons);
	dev_sample s = {.sensor = h + 1, .buttons = pressed ? 1u : 0u};
	s.position[0] = where.pose.position.x, s.position[1] = where.pose.position.y + floor_offset(x);
	s.position[2] = where.pose.position.z;
	s.orientation[0] = where.pose.orientation.x, s.orientation[1] = where.pose.orientation.y;
	s.orientation[2] = where.pose.orientation.z, s.orientation[3] = where.pose.orientation.w;
	if (dev_push(x->controller, &s)) {
		x->poses_pushed++;
		x->last_pushed = s;
	}
}

/* The grabbing hand vibrates with the coupling force on the vertex it holds. */
static void haptics(xr_app *x, const st_snapshot *s)
{
	if (!x->controller || x->state != XR_SESSION_STATE_FOCUSED || x->lost)
		return;
	XrHapticActionInfo info = {.type = XR_TYPE_HAPTIC_ACTION_INFO,
	                           .action = x->haptic,
	                           .subactionPath = x->hands[x->options->hand]};
	if (s->grabbed_vertex < 0) {
		if (x->haptic_on) {
			XrResult r = xrStopHapticFeedback(x->session, &info);
			if (XR_SUCCEEDED(r))
				x->haptic_on = false;
			lost(x, r);
		}
		return;
	}
	float f = sqrtf(s->grab_force[0] * s->grab_force[0] + s->grab_force[1] * s->grab_force[1] +
	                s->grab_force[2] * s->grab_force[2]);
	XrHapticVibration v = {.type = XR_TYPE_HAPTIC_VIBRATION,
	                       .duration = HAPTIC_PULSE_NS,
	                       .frequency = XR_FREQUENCY_UNSPECIFIED,
	                       .amplitude = haptic_amplitude(f)};
	XrResult r = xrApplyHapticFeedback(x->session, &info, (const XrHapticBaseHeader *)&v);
	if (XR_SUCCEEDED(r)) {
		x->haptic_on = true;
		x->haptic_requests++;
		if (v.amplitude > x->peak_amplitude)
			x->peak_amplitude = v.amplitude, x->peak_force = f;
	}
	lost(x, r);
}

/* What the summary says about the grab: which vertex, and how far it rose. */
static void watch_grab(xr_app *x, const st_snapshot *s)
{
	int v = s->grabbed_vertex;
	if (v < 0 || v >= s->vertex_count)
		return;
	if (v != x->grab_vertex) {
		x->grab_vertex = v;
		x->grab_start_y = s->positions[v][1];
		x->grab_rise = 0.0f;
	}
	float rise = s->positions[v][1] - x->grab_start_y;
	if (rise > x->grab_rise)
		x->grab_rise = rise;
}

/* ---- a frame ---------------------------------------------------------------------------------- */

static bool render_eye(xr_app *x, uint32_t v, const XrView *view, XrCompositionLayerProjectionView *layer)
{
	eye *e = &x->eyes[v];
	uint32_t index = 0;
	XrSwapchainImageAcquireInfo acquire = {.type = XR_TYPE_SWAPCHAIN_IMAGE_ACQUIRE_INFO};
	if (!ok(x, xrAcquireSwapchainImage(e->swapchain, &acquire, &index), "xrAcquireSwapchainImage"))
		return false;
	XrSwapchainImageWaitInfo wait = {.type = XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO, .timeout = XR_INFINITE_DURATION};
	if (!ok(x, xrWaitSwapchainImage(e->swapchain, &wait), "xrWaitSwapchainImage"))
		return false;
	glBindFramebuffer(GL_FRAMEBUFFER, e->framebuffer);
	glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, e->images[index], 0);
	glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, e->depth);
	GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
	if (status != GL_FRAMEBUFFER_COMPLETE) {
		glBindFramebuffer(GL_FRAMEBUFFER, 0);
		fprintf(stderr, "tela --xr: the runtime's swapchain image %u cannot be drawn into (framebuffer status 0x%x)\n",
		        e->images[index], status);
		return false;
	}
	rd_frame f;
	demo_eye_frame(x->demo, &f);
	float p[3], q[4];
	stage_to_world(x, &view->pose, p, q);
	f.use_matrices = true;
	view_matrix(p, q, f.view_matrix);
	projection_matrix(&view->fov, f.projection_matrix);
	/* the floor grid follows a point 1.5 m ahead of the eye */
	float ahead[3] = {0.0f, 0.0f, -1.5f}, a[3];
	qrot(q, ahead, a);
	for (int k = 0; k < 3; k++)
		f.view.eye[k] = p[k], f.view.target[k] = p[k] + a[k];
	f.view.width = e->width, f.view.height = e->height;
	glDisable(GL_FRAMEBUFFER_SRGB);
	rd_draw(demo_renderer(x->demo), &f);
	if (v == 0) {
		glBindFramebuffer(GL_READ_FRAMEBUFFER, e->framebuffer);
		glBindFramebuffer(GL_DRAW_FRAMEBUFFER, x->mirror);
		glBlitFramebuffer(0, 0, e->width, e->height, 0, 0, e->width, e->height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
	}
	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	XrSwapchainImageReleaseInfo release = {.type = XR_TYPE_SWAPCHAIN_IMAGE_RELEASE_INFO};
	if (!ok(x, xrReleaseSwapchainImage(e->swapchain, &release), "xrReleaseSwapchainImage"))
		return false;
	*layer = (XrCompositionLayerProjectionView){.type = XR_TYPE_COMPOSITION_LAYER_PROJECTION_VIEW,
	                                             .pose = view->pose,
	                                             .fov = view->fov,
	                                             .subImage = {.swapchain = e->swapchain,
	                                                          .imageRect = {{0, 0}, {e->width, e->height}}}};
	return true;
}

/* One frame of the running session: false on an error that ends it. */
static bool xr_frame(xr_app *x)
{
	XrFrameWaitInfo wait = {.type = XR_TYPE_FRAME_WAIT_INFO};
	XrFrameState fs = {.type = XR_TYPE_FRAME_STATE};
	XrResult r = xrWaitFrame(x->session, &wait, &fs);
	if (lost(x, r))
		return true;
	if (!ok(x, r, "xrWaitFrame"))
		return false;
	x->frames_waited++;
	x->period = fs.predictedDisplayPeriod;
	XrFrameBeginInfo begin = {.type = XR_TYPE_FRAME_BEGIN_INFO};
	if (!ok(x, xrBeginFrame(x->session, &begin), "xrBeginFrame"))
		return false;
	controllers(x, fs.predictedDisplayTime);
	const st_snapshot *s = demo_snapshot(x->demo);
	haptics(x, s);
	if (x->lost)
		return true;
	watch_grab(x, s);
	XrCompositionLayerProjectionView views[MAX_VIEWS];
	XrCompositionLayerProjection layer = {.type = XR_TYPE_COMPOSITION_LAYER_PROJECTION,
	                                      .space = x->space,
	                                      .viewCount = x->view_count,
	                                      .views = views};
	const XrCompositionLayerBaseHeader *layers[1] = {(const XrCompositionLayerBaseHeader *)&layer};
	uint32_t layer_count = 0;
	if (fs.shouldRender) {
		XrView located[MAX_VIEWS];
		for (uint32_t v = 0; v < MAX_VIEWS; v++)
			located[v] = (XrView){.type = XR_TYPE_VIEW};
		XrViewLocateInfo li = {.type = XR_TYPE_VIEW_LOCATE_INFO,
		                       .viewConfigurationType = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO,
		                       .displayTime = fs.predictedDisplayTime,
		                       .space = x->space};
		XrViewState vs = {.type = XR_TYPE_VIEW_STATE};
		uint32_t n = 0;
		if (!ok(x, xrLocateViews(x->session, &li, &vs, MAX_VIEWS, &n, located), "xrLocateViews"))
			return false;
		const XrViewStateFlags needed = XR_VIEW_STATE_POSITION_VALID_BIT | XR_VIEW_STATE_ORIENTATION_VALID_BIT;
		/* without a valid head pose nothing sensible can be drawn: submit no layer */
		if (n == x->view_count && (vs.viewStateFlags & needed) == needed) {
			for (uint32_t v = 0; v < n; v++)
				if (!render_eye(x, v, &located[v], &views[v]))
					return false;
			layer_count = 1;
			x->frames_rendered++;
		}
	}
	XrFrameEndInfo end = {.type = XR_TYPE_FRAME_END_INFO,
	                      .displayTime = fs.predictedDisplayTime,
	                      .environmentBlendMode = x->blend,
	                      .layerCount = layer_count,
	                      .layers = layer_count ? layers : NULL};
	if (!ok(x, xrEndFrame(x->session, &end), "xrEndFrame"))
		return false;
	x->frames_submitted++;
	return true;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* ---- the run ---------------------------------------------------------------------------------- */

static int start_demo(xr_app *x)
{
	const xr_options *o = x->options;
	/* XR_KHR_opengl_enable on Linux is Xlib/GLX: the window must be an X11 one */
	if (!getenv("SDL_VIDEODRIVER"))
		setenv("SDL_VIDEODRIVER", "x11", 1);
	demo_options d = demo_options_default();
	d.scene = o->scene;
	d.width = o->width, d.height = o->height;
	d.panel = o->panel;
	d.start_paused = o->paused;
	d.vsync = false; /* xrWaitFrame paces the loop; a window's vsync would fight it */
	d.camera_station = 0; /* the headset moves the view */
	d.gain = o->gain;
	d.grab_radius = o->grab_radius;
	d.record = o->record;
	char error[1024];
	if (o->device) {
		d.device = o->device;
		d.calibration = o->calibration;
	} else {
		x->controller = dev_open_push("openxr", DEV_FRAME_DEVICE, error, sizeof error);
		if (!x->controller) {
			fprintf(stderr, "tela --xr: the controllers: %s\n", error);
			return EXIT_TELA_XR;
		}
		d.device = "push:openxr";
		d.device_source = x->controller;
	}
	/* the stage's mapping needs the scene's camera, from the scene's layout, before the
	 * device thread starts with the calibration */
	trk_calibration calibration = trk_calibration_default();
	if (o->calibration && !trk_calibration_load(o->calibration, &calibration, error, sizeof error)) {
		fprintf(stderr, "tela --xr: %s\n", error);
		return EXIT_TELA_INPUT;
	}
	if (!o->device) {
		/* the controllers report in the stage itself, the tip ahead of the grip */
		calibration = (trk_calibration){.rotation = {0, 0, 0, 1}, .scale = 1.0f, .tip = {0, 0, -CONTROLLER_TIP_M}};
	}
	scn_scene *scene = NULL;
	scn_error err = {0};
	if (scn_load(o->scene, &scene, &err) != SCN_OK) {
		fprintf(stderr, "tela --xr: %s\n", err.message);
		return EXIT_TELA_INPUT;
	}
	st_layout probe;
	bool built = false;
	sim_world *world = NULL;
	if (scn_build(scene, &world, &err) == SCN_OK)
		built = st_layout_build(&probe, scene, world);
	sim_world_destroy(&world);
	scn_scene_free(&scene);
	if (!built) {
		fprintf(stderr, "tela --xr: %s\n", err.message[0] ? err.message : "the scene could not be built");
		return EXIT_TELA_INPUT;
	}
	place_stage(x, &probe);
	st_layout_free(&probe);
	x->calibration = then_stage(x, &calibration);
	d.device_calibration = &x->calibration;
	int code;
	x->demo = demo_create(&d, error, sizeof error, &code);
	if (!x->demo) {
		fprintf(stderr, "tela --xr: %s\n", error);
		return code == 3 ? EXIT_TELA_INPUT : EXIT_TELA_DISPLAY;
	}
	return EXIT_TELA_OK;
}

static void summary(const xr_app *x, const struct timespec *t0)
{
	printf("xr: runtime '%s', system '%s', %u views of %dx%d, %s, %s space\n", x->runtime, x->system_name,
	       x->view_count, x->eyes[0].width, x->eyes[0].height, format_name(x->format), x->stage ? "stage" : "local");
	printf("xr: session states: %s\n", x->states);
	printf("xr: %lld frames submitted (%lld rendered) in %.2f s, display period %.2f ms\n",
	       (long long)x->frames_submitted, (long long)x->frames_rendered, seconds_since(t0), (double)x->period * 1e-6);
	dt_status ds;
	char line[256];
	if (demo_device_status(x->demo, &ds, line, sizeof line))
		printf("xr: pointer: %s | %llu samples, %d grabs, %d releases\n", line, (unsigned long long)ds.samples,
		       ds.grabs, ds.releases);
	if (x->controller)
		printf("xr: %s controller: %llu poses; haptics: %d requests, peak amplitude %.3f at %.3f N\n",
		       x->options->hand ? "right" : "left", (unsigned long long)x->poses_pushed, x->haptic_requests,
		       (double)x->peak_amplitude, (double)x->peak_force);
	if (x->grab_vertex >= 0)
		printf("xr: grab: vertex %d rose %.3f m\n", x->grab_vertex, (double)x->grab_rise);
	const st_snapshot *s = demo_snapshot(x->demo);
	if (s->message[0])
		printf("xr: simulation: %s\n", s->message);
}

static void say_lost(const xr_app *x)
{
	if (x->lost)
		fprintf(stderr, "tela --xr: the runtime lost the session (the headset was disconnected or its "
		                "runtime stopped)\n");
}

int xr_run(const xr_options *o)
{
	xr_app x = {.options = o, .grab_vertex = -1, .state = XR_SESSION_STATE_UNKNOWN};
	if (!runtime_present(x.manifest, sizeof x.manifest))
		return EXIT_TELA_XR;
	if (!create_instance(&x) || !get_system(&x)) {
		say_lost(&x);
		destroy(&x);
		return EXIT_TELA_XR;
	}
	int code = start_demo(&x);
	if (code != EXIT_TELA_OK) {
		destroy(&x);
		dev_close(&x.controller);
		return code;
	}
	code = EXIT_TELA_XR;
	if (check_gl_requirements(&x) && create_session(&x) && create_space(&x) && create_actions(&x) &&
	    create_swapchains(&x)) {
		if (!x.stage)
			fprintf(stderr, "tela --xr: the runtime has no stage space: the floor is taken %.1f m below the "
			                "headset's starting height\n",
			        (double)LOCAL_EYE_HEIGHT_M);
		demo_set_mirror(x.demo, x.mirror, x.eyes[0].width, x.eyes[0].height);
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		bool failed = false;
		struct timespec stop_at = {0, 0};
		while (!x.done && !failed) {
			if (stop_requested()) {
				/* a signal: the session ends as when the window closes, the runtime's way
				 * (STOPPING, EXITING), but a runtime that takes long is not waited for */
				if (stop_at.tv_sec == 0)
					clock_gettime(CLOCK_MONOTONIC, &stop_at);
				else if (seconds_since(&stop_at) >= 0.5)
					break;
				request_exit(&x);
			}
			poll_events(&x);
			if (x.done)
				break;
			if (x.running) {
				failed = !xr_frame(&x);
			} else {
				/* not running (IDLE, or waiting for READY): the runtime shows nothing of
				 * tela's; keep the window alive without spinning */
				struct timespec nap = {0, 10000000};
				nanosleep(&nap, NULL);
			}
			if (!demo_frame(x.demo))
				request_exit(&x);
			if (o->seconds > 0.0 && seconds_since(&t0) >= o->seconds)
				request_exit(&x);
		}
		demo_set_mirror(x.demo, 0, 0, 0);
		summary(&x, &t0);
		code = failed || x.lost ? EXIT_TELA_XR : stop_requested() ? stop_exit_code() : EXIT_TELA_OK;
		int errors = demo_gl_errors(x.demo);
		if (errors)
			fprintf(stderr, "tela: %d OpenGL errors were reported during the run\n", errors);
	}
	say_lost(&x);
	destroy(&x);
	demo_destroy(&x.demo);
	dev_close(&x.controller);
	return code;
}
