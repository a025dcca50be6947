/* A small OpenXR runtime for tela's tests (issue 8): a test fixture only, never linked
 * into tela nor installed.  The OpenXR loader finds it through the manifest that
 * tests/xr.cmake writes into the build tree (XR_RUNTIME_JSON).
 *
 * It implements exactly the calls tela makes, over one simulated headset with two
 * controllers (the Khronos simple controller profile), and no more:
 *   - swapchain images are real GL textures, made in the application's context (which
 *     must be current on the calling thread, as XR_KHR_opengl_enable requires);
 *   - the head and the controllers follow a script (TELA_XR_TEST_SCRIPT), in stage space,
 *     keyed on the time since the session began;
 *   - the session state machine runs IDLE -> READY -> SYNCHRONIZED -> VISIBLE -> FOCUSED
 *     and, at the script's `exit` time, back down to STOPPING, then IDLE and EXITING once
 *     the application ends the session; `loss` queues LOSS_PENDING instead;
 *   - `instance_lost` makes the runtime die as a runtime's service killed mid-session
 *     does: a call returns XR_ERROR_INSTANCE_LOST with no event before it, and so does
 *     every later call but xrDestroyInstance (one is logged as an error);
 *   - every predicted display time, submitted frame, haptic request and state change is
 *     written to a log (TELA_XR_TEST_LOG) for the test to read;
 *   - at the script's `capture` time the left eye's submitted image is read back into a
 *     PPM file (TELA_XR_TEST_EYE).
 * Invalid handles and arguments get the XrResult codes the specification gives for the
 * calls implemented here.
 *
 * Script lines (times in seconds since xrBeginSession; poses: position x y z, then
 * orientation quaternion x y z w, stage space; values between keys are interpolated,
 * the button holds its last key's value):
 *   period S                  display period (default 1/60)
 *   exit T                    the runtime asks the application to stop at T
 *   loss T                    the session is about to be lost at T
 *   capture T                 read back the left eye of the first frame shown at or after T
 *   unfocus T                 the session loses the input focus (FOCUSED -> VISIBLE) at T
 *   refocus T                 and gets it back at T
 *   pause T                   the runtime stops the session at T (a headset taken off):
 *                             STOPPING, then IDLE once the application ends it
 *   resume T                  and makes it READY again at T
 *   instance_lost N CALL      once N frames have been waited for, the next CALL (an
 *                             OpenXR function: xrWaitFrame, xrSyncActions...) loses the
 *                             instance, queuing no event
 *   head T x y z qx qy qz qw
 *   left|right T x y z qx qy qz qw SELECT      (SELECT: 0 or 1)
 */
#define _POSIX_C_SOURCE 200809L
#define XR_USE_PLATFORM_XLIB
#define XR_USE_GRAPHICS_API_OPENGL
#include <GL/gl.h>
#include <GL/glx.h>
#include <X11/Xlib.h>
#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>
#include <openxr/openxr_reflection.h>

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- the loader's negotiation interface (OpenXR loader specification, "Runtime
 * Interface Negotiation"; not in Debian's installed headers) ---------------------------- */

typedef enum XrLoaderInterfaceStructs {
	XR_LOADER_INTERFACE_STRUCT_UNINTIALIZED = 0,
	XR_LOADER_INTERFACE_STRUCT_LOADER_INFO,
	XR_LOADER_INTERFACE_STRUCT_API_LAYER_REQUEST,
	XR_LOADER_INTERFACE_STRUCT_RUNTIME_REQUEST,
	XR_LOADER_INTERFACE_STRUCT_API_LAYER_CREATE_INFO,
	XR_LOADER_INTERFACE_STRUCT_API_LAYER_NEXT_INFO,
} XrLoaderInterfaceStructs;

typedef struct XrNegotiateLoaderInfo {
	XrLoaderInterfaceStructs structType;
	uint32_t structVersion;
	size_t structSize;
	uint32_t minInterfaceVersion;
	uint32_t maxInterfaceVersion;
	XrVersion minApiVersion;
	XrVersion maxApiVersion;
} XrNegotiateLoaderInfo;

typedef struct XrNegotiateRuntimeRequest {
	XrLoaderInterfaceStructs structType;
	uint32_t structVersion;
	size_t structSize;
	uint32_t runtimeInterfaceVersion;
	XrVersion runtimeApiVersion;
	PFN_xrGetInstanceProcAddr getInstanceProcAddr;
} XrNegotiateRuntimeRequest;

/* ---- objects and handles ------------------------------------------------------------------ */

typedef enum kind { K_FREE, K_INSTANCE, K_SESSION, K_SPACE, K_SWAPCHAIN, K_ACTION_SET, K_ACTION } kind;

enum { MAX_OBJECTS = 256, MAX_KEYS = 512, MAX_PATHS = 128, MAX_IMAGES = 3, MAX_EVENTS = 32 };
static const XrSystemId SYSTEM_ID = 0x7e1a;
static const int EYE_WIDTH = 320, EYE_HEIGHT = 288;

typedef struct pose {
	float p[3], q[4]; /* q: x y z w */
} pose;

typedef struct object {
	kind kind;
	uint32_t generation;
	struct object *parent; /* instance for sessions and action sets; session for spaces, swapchains; set for actions */
	/* session */
	XrSessionState state;
	bool running, exit_requested, lost, ended_once;
	GLXContext context;
	Display *display;
	bool frame_waited, frame_begun;
	XrTime last_predicted, begin_ns;
	int64_t frames_waited, frames_ended;
	bool attached;
	bool captured, unfocused, refocused;
	bool pausing, paused, resumed, begun_once;
	XrTime exit_at, loss_at;
	/* space */
	int space_kind; /* XrReferenceSpaceType, or 0 for an action space */
	struct object *action;
	XrPath subaction;
	pose offset;
	/* swapchain */
	GLuint images[MAX_IMAGES];
	int width, height;
	int64_t format;
	int acquire_next, acquired_count; /* images go round in order */
	bool waited;
	int last_released;
	/* action set / action */
	char name[XR_MAX_ACTION_NAME_SIZE];
	XrActionType action_type;
	XrPath subactions[2];
	int subaction_count;
	bool bound[2]; /* per hand: a binding in the simple profile reached it */
	bool state_bool[2], changed[2];
	bool set_attached;
} object;

static object objects[MAX_OBJECTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t handle_of(object *o) { return ((uint64_t)o->generation << 16) | (uint64_t)(o - objects + 1); }

static object *lookup(uint64_t h, kind k)
{
	uint64_t index = h & 0xffff;
	if (index == 0 || index > MAX_OBJECTS)
		return NULL;
	object *o = &objects[index - 1];
	if (o->kind != k || o->generation != (uint32_t)(h >> 16))
		return NULL;
	return o;
}

static object *new_object(kind k, object *parent)
{
	for (int i = 0; i < MAX_OBJECTS; i++)
		if (objects[i].kind == K_FREE) {
			uint32_t g = objects[i].generation + 1;
			memset(&objects[i], 0, sizeof objects[i]);
			objects[i].generation = g;
			objects[i].kind = k;
			objects[i].parent = parent;
			return &objects[i];
		}
	return NULL;
}

static void free_tree(object *o)
{
	for (int i = 0; i < MAX_OBJECTS; i++)
		if (objects[i].kind != K_FREE && objects[i].parent == o)
			free_tree(&objects[i]);
	if (o->kind == K_SWAPCHAIN && glXGetCurrentContext())
		glDeleteTextures(MAX_IMAGES, o->images);
	o->kind = K_FREE;
}

/* ---- the script, the log and time ----------------------------------------------------------- */

typedef struct key {
	double t;
	pose pose;
	bool select;
} key;

typedef struct track {
	key keys[MAX_KEYS];
	int count;
} track;

static struct {
	bool loaded;
	double period;
	double exit_at, loss_at, capture_at, unfocus_at, refocus_at, pause_at, resume_at;
	double instance_lost_after; /* frames */
	char instance_lost_call[64];
	track head, hands[2];
} script;

/* The instance is lost (the script's instance_lost): nothing but xrDestroyInstance works. */
static bool instance_dead;
static int64_t frames_waited_total;

static FILE *log_file;
static char paths[MAX_PATHS][XR_MAX_PATH_LENGTH];
static int path_count;
static struct {
	bool instance_exists;
	XrEventDataBuffer queue[MAX_EVENTS];
	int first, count;
} events;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	if (!log_file)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(log_file, fmt, ap);
	va_end(ap);
	fputc('\n', log_file);
	fflush(log_file);
}

static bool read_pose(const char *s, pose *p, int *consumed)
{
	return sscanf(s, "%f %f %f %f %f %f %f%n", &p->p[0], &p->p[1], &p->p[2], &p->q[0], &p->q[1], &p->q[2], &p->q[3],
	              consumed) == 7;
}

static void load_script(void)
{
	script.loaded = true;
	script.period = 1.0 / 60.0;
	script.exit_at = script.loss_at = script.capture_at = script.unfocus_at = script.refocus_at = -1.0;
	script.pause_at = script.resume_at = script.instance_lost_after = -1.0;
	const char *path = getenv("TELA_XR_TEST_SCRIPT");
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f) {
		if (path)
			logf_("error script %s cannot be read", path);
		return;
	}
	char line[512];
	int number = 0;
	while (fgets(line, sizeof line, f)) {
		number++;
		char word[16];
		double t;
		int n;
		if (line[0] == '#' || sscanf(line, "%15s%n", word, &n) != 1)
			continue;
		const char *rest = line + n;
		int m = 0;
		if (sscanf(rest, "%lf%n", &t, &m) != 1) {
			logf_("error script line %d: no time", number);
			continue;
		}
		rest += m;
		if (strcmp(word, "period") == 0) {
			script.period = t;
		} else if (strcmp(word, "exit") == 0) {
			script.exit_at = t;
		} else if (strcmp(word, "loss") == 0) {
			script.loss_at = t;
		} else if (strcmp(word, "capture") == 0) {
			script.capture_at = t;
		} else if (strcmp(word, "unfocus") == 0) {
			script.unfocus_at = t;
		} else if (strcmp(word, "refocus") == 0) {
			script.refocus_at = t;
		} else if (strcmp(word, "pause") == 0) {
			script.pause_at = t;
		} else if (strcmp(word, "resume") == 0) {
			script.resume_at = t;
		} else if (strcmp(word, "instance_lost") == 0) {
			script.instance_lost_after = t;
			if (sscanf(rest, "%63s", script.instance_lost_call) != 1)
				logf_("error script line %d: instance_lost without a call", number);
		} else {
			track *tr = strcmp(word, "head") == 0    ? &script.head
			            : strcmp(word, "left") == 0  ? &script.hands[0]
			            : strcmp(word, "right") == 0 ? &script.hands[1]
			                                         : NULL;
			key k = {.t = t};
			int c = 0, select = 0;
			if (!tr || tr->count == MAX_KEYS || !read_pose(rest, &k.pose, &c) ||
			    (tr != &script.head && sscanf(rest + c, "%d", &select) != 1)) {
				logf_("error script line %d not understood", number);
				continue;
			}
			k.select = select != 0;
			tr->keys[tr->count++] = k;
		}
	}
	fclose(f);
}

static void normalize(float q[4])
{
	float l = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	for (int k = 0; k < 4; k++)
		q[k] = l > 0.0f ? q[k] / l : (k == 3 ? 1.0f : 0.0f);
}

/* The track at t: linear in position, normalised linear in orientation (the scripts turn
 * slowly); held before the first key and after the last. */
static bool track_at(const track *tr, double t, pose *out, bool *select)
{
	if (tr->count == 0)
		return false;
	int i = 0;
	while (i + 1 < tr->count && tr->keys[i + 1].t <= t)
		i++;
	const key *a = &tr->keys[i];
	*out = a->pose;
	if (select)
		*select = a->select;
	if (i + 1 < tr->count && t > a->t) {
		const key *b = &tr->keys[i + 1];
		float u = (float)((t - a->t) / (b->t - a->t));
		float sign = a->pose.q[0] * b->pose.q[0] + a->pose.q[1] * b->pose.q[1] + a->pose.q[2] * b->pose.q[2] +
		                         a->pose.q[3] * b->pose.q[3] <
		                     0.0f
		                 ? -1.0f
		                 : 1.0f;
		for (int k = 0; k < 3; k++)
			out->p[k] = a->pose.p[k] + u * (b->pose.p[k] - a->pose.p[k]);
		for (int k = 0; k < 4; k++)
			out->q[k] = a->pose.q[k] + u * (sign * b->pose.q[k] - a->pose.q[k]);
	}
	normalize(out->q);
	return true;
}

/* ---- pose algebra --------------------------------------------------------------------------- */

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

/* a then b: the pose b expressed in a's frame, composed (a * b). */
static pose compose(const pose *a, const pose *b)
{
	pose o;
	qrot(a->q, b->p, o.p);
	for (int k = 0; k < 3; k++)
		o.p[k] += a->p[k];
	qmul(a->q, b->q, o.q);
	return o;
}

static pose inverse(const pose *a)
{
	pose o = {.q = {-a->q[0], -a->q[1], -a->q[2], a->q[3]}};
	qrot(o.q, a->p, o.p);
	for (int k = 0; k < 3; k++)
		o.p[k] = -o.p[k];
	return o;
}

static pose from_xr(const XrPosef *p)
{
	return (pose){{p->position.x, p->position.y, p->position.z},
	              {p->orientation.x, p->orientation.y, p->orientation.z, p->orientation.w}};
}

static XrPosef to_xr(const pose *p)
{
	return (XrPosef){{p->q[0], p->q[1], p->q[2], p->q[3]}, {p->p[0], p->p[1], p->p[2]}};
}

static bool pose_valid(const XrPosef *p)
{
	float l = p->orientation.x * p->orientation.x + p->orientation.y * p->orientation.y +
	          p->orientation.z * p->orientation.z + p->orientation.w * p->orientation.w;
	return fabsf(l - 1.0f) < 1e-3f && isfinite(p->position.x) && isfinite(p->position.y) && isfinite(p->position.z);
}

static double script_time(const object *session, XrTime t) { return (double)(t - session->begin_ns) * 1e-9; }

static const pose IDENTITY = {{0, 0, 0}, {0, 0, 0, 1}};

static pose head_at(const object *session, XrTime t)
{
	pose p = {{0.0f, 1.6f, 0.0f}, {0, 0, 0, 1}};
	track_at(&script.head, script_time(session, t), &p, NULL);
	return p;
}

/* The pose of a space in stage coordinates at time t; false when untracked. */
static bool space_in_stage(const object *space, XrTime t, pose *out)
{
	const object *session = space->parent;
	pose root = IDENTITY;
	switch (space->space_kind) {
	case XR_REFERENCE_SPACE_TYPE_STAGE: break;
	case XR_REFERENCE_SPACE_TYPE_LOCAL: root.p[1] = 1.6f; break; /* eye height over the stage's floor */
	case XR_REFERENCE_SPACE_TYPE_VIEW: root = head_at(session, t); break;
	default: {
		int hand = -1;
		for (int i = 0; i < path_count; i++)
			if ((XrPath)(i + 1) == space->subaction)
				hand = strcmp(paths[i], "/user/hand/left") == 0 ? 0 : strcmp(paths[i], "/user/hand/right") == 0 ? 1 : -1;
		if (hand < 0 || !space->action->bound[hand] || !session->attached ||
		    !track_at(&script.hands[hand], script_time(session, t), &root, NULL))
			return false;
	}
	}
	*out = compose(&root, &space->offset);
	return true;
}

/* ---- events and the state machine ----------------------------------------------------------- */

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
	default: return "?";
	}
}

static void set_state(object *session, XrSessionState s)
{
	session->state = s;
	logf_("state %s", state_name(s));
	if (events.count == MAX_EVENTS)
		return;
	XrEventDataSessionStateChanged *e =
	    (XrEventDataSessionStateChanged *)&events.queue[(events.first + events.count++) % MAX_EVENTS];
	memset(e, 0, sizeof(XrEventDataBuffer));
	e->type = XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED;
	e->session = (XrSession)handle_of(session);
	e->state = s;
	e->time = now_ns();
}

/* Steps down from wherever a running session is to STOPPING. */
static void wind_down(object *session)
{
	if (session->state == XR_SESSION_STATE_FOCUSED)
		set_state(session, XR_SESSION_STATE_VISIBLE);
	if (session->state == XR_SESSION_STATE_VISIBLE)
		set_state(session, XR_SESSION_STATE_SYNCHRONIZED);
	if (session->state == XR_SESSION_STATE_SYNCHRONIZED || session->state == XR_SESSION_STATE_READY)
		set_state(session, XR_SESSION_STATE_STOPPING);
}

/* ---- the API -------------------------------------------------------------------------------- */

#define CHECK_TYPE(ptr, t)                                                                             \
	do {                                                                                               \
		if (!(ptr))                                                                                    \
			return XR_ERROR_VALIDATION_FAILURE;                                                        \
		if ((ptr)->type != (t))                                                                        \
			return XR_ERROR_VALIDATION_FAILURE;                                                        \
	} while (0)

/* The specification's two-call idiom for an array of n items: a NULL count is a
 * validation failure, the count is always written, a capacity of 0 asks for the count
 * alone and a short one is XR_ERROR_SIZE_INSUFFICIENT.  *fill says whether the caller
 * writes the n items (only with XR_SUCCESS). */
static XrResult two_call(uint32_t capacity, uint32_t *count, uint32_t n, bool *fill)
{
	*fill = false;
	if (!count)
		return XR_ERROR_VALIDATION_FAILURE;
	*count = n;
	if (capacity == 0)
		return XR_SUCCESS;
	if (capacity < n)
		return XR_ERROR_SIZE_INSUFFICIENT;
	*fill = true;
	return XR_SUCCESS;
}

/* XR_SUCCESS for a live handle of kind k, else XR_ERROR_HANDLE_INVALID (or
 * XR_ERROR_INSTANCE_LOST); func: the calling function's name, for instance_lost. */
static XrResult check_handle_(uint64_t handle, kind k, const char *func);
#define check_handle(handle, k) check_handle_(handle, k, __func__)
static bool lost_at(const char *func);

static XrResult XRAPI_CALL enumerate_extensions(const char *layer, uint32_t capacity, uint32_t *count,
                                                XrExtensionProperties *props)
{
	if (layer)
		return XR_ERROR_API_LAYER_NOT_PRESENT;
	bool fill;
	XrResult r = two_call(capacity, count, 1, &fill);
	if (!fill)
		return r;
	if (props[0].type != XR_TYPE_EXTENSION_PROPERTIES)
		return XR_ERROR_VALIDATION_FAILURE;
	snprintf(props[0].extensionName, sizeof props[0].extensionName, "%s", XR_KHR_OPENGL_ENABLE_EXTENSION_NAME);
	props[0].extensionVersion = XR_KHR_opengl_enable_SPEC_VERSION;
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL create_instance(const XrInstanceCreateInfo *info, XrInstance *out)
{
	CHECK_TYPE(info, XR_TYPE_INSTANCE_CREATE_INFO);
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	if (XR_VERSION_MAJOR(info->applicationInfo.apiVersion) != 1)
		return XR_ERROR_API_VERSION_UNSUPPORTED;
	for (uint32_t i = 0; i < info->enabledExtensionCount; i++)
		if (strcmp(info->enabledExtensionNames[i], XR_KHR_OPENGL_ENABLE_EXTENSION_NAME) != 0)
			return XR_ERROR_EXTENSION_NOT_PRESENT;
	pthread_mutex_lock(&lock);
	if (events.instance_exists) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_LIMIT_REACHED; /* one instance at a time, as many runtimes */
	}
	const char *log_path = getenv("TELA_XR_TEST_LOG");
	if (log_path && !log_file)
		log_file = fopen(log_path, "w");
	if (!script.loaded)
		load_script();
	object *o = new_object(K_INSTANCE, NULL);
	events.instance_exists = true;
	events.first = events.count = 0;
	path_count = 0;
	logf_("instance %s extensions %u", info->applicationInfo.applicationName, info->enabledExtensionCount);
	*out = (XrInstance)handle_of(o);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

/* Every call on the instance or its children looks its handle up here (the lock held),
 * so this is where a lost instance answers. */
#define LOCKED_LOOKUP(var, handle, k)                                                                  \
	if (lost_at(__func__)) {                                                                           \
		pthread_mutex_unlock(&lock);                                                                   \
		return XR_ERROR_INSTANCE_LOST;                                                                 \
	}                                                                                                  \
	object *var = lookup((uint64_t)(handle), k);                                                       \
	if (!var) {                                                                                        \
		pthread_mutex_unlock(&lock);                                                                   \
		return XR_ERROR_HANDLE_INVALID;                                                                \
	}

static XrResult check_handle_(uint64_t handle, kind k, const char *func)
{
	pthread_mutex_lock(&lock);
	bool dead = lost_at(func);
	bool live = lookup(handle, k) != NULL;
	pthread_mutex_unlock(&lock);
	return dead ? XR_ERROR_INSTANCE_LOST : live ? XR_SUCCESS : XR_ERROR_HANDLE_INVALID;
}

/* The one call a lost instance still takes. */
static XrResult XRAPI_CALL destroy_instance(XrInstance instance)
{
	pthread_mutex_lock(&lock);
	object *o = lookup((uint64_t)instance, K_INSTANCE);
	if (!o) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_HANDLE_INVALID;
	}
	free_tree(o);
	events.instance_exists = false;
	instance_dead = false;
	logf_("destroy instance");
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL get_instance_properties(XrInstance instance, XrInstanceProperties *props)
{
	CHECK_TYPE(props, XR_TYPE_INSTANCE_PROPERTIES);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, instance, K_INSTANCE);
	(void)o;
	props->runtimeVersion = XR_MAKE_VERSION(0, 1, 0);
	snprintf(props->runtimeName, sizeof props->runtimeName, "tela test runtime");
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL poll_event(XrInstance instance, XrEventDataBuffer *out)
{
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, instance, K_INSTANCE);
	(void)o;
	/* an idle, paused session becomes ready again at the script's `resume` (no frames
	 * run while idle: the application polls) */
	for (int i = 0; i < MAX_OBJECTS; i++) {
		object *s = &objects[i];
		if (s->kind == K_SESSION && s->paused && !s->resumed && s->state == XR_SESSION_STATE_IDLE &&
		    script.resume_at >= 0.0 && script_time(s, now_ns()) >= script.resume_at) {
			s->resumed = true;
			set_state(s, XR_SESSION_STATE_READY);
		}
	}
	XrResult r = XR_EVENT_UNAVAILABLE;
	if (events.count > 0) {
		*out = events.queue[events.first];
		events.first = (events.first + 1) % MAX_EVENTS;
		events.count--;
		r = XR_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL get_system(XrInstance instance, const XrSystemGetInfo *info, XrSystemId *out)
{
	CHECK_TYPE(info, XR_TYPE_SYSTEM_GET_INFO);
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, instance, K_INSTANCE);
	(void)o;
	pthread_mutex_unlock(&lock);
	if (info->formFactor == XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY) {
		*out = SYSTEM_ID;
		return XR_SUCCESS;
	}
	return info->formFactor == XR_FORM_FACTOR_HANDHELD_DISPLAY ? XR_ERROR_FORM_FACTOR_UNSUPPORTED
	                                                           : XR_ERROR_VALIDATION_FAILURE;
}

static XrResult XRAPI_CALL get_system_properties(XrInstance instance, XrSystemId system, XrSystemProperties *props)
{
	CHECK_TYPE(props, XR_TYPE_SYSTEM_PROPERTIES);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, instance, K_INSTANCE);
	(void)o;
	pthread_mutex_unlock(&lock);
	if (system != SYSTEM_ID)
		return XR_ERROR_SYSTEM_INVALID;
	props->systemId = system;
	props->vendorId = 0;
	snprintf(props->systemName, sizeof props->systemName, "tela test headset");
	props->graphicsProperties.maxSwapchainImageWidth = 4096;
	props->graphicsProperties.maxSwapchainImageHeight = 4096;
	props->graphicsProperties.maxLayerCount = XR_MIN_COMPOSITION_LAYERS_SUPPORTED;
	props->trackingProperties.orientationTracking = XR_TRUE;
	props->trackingProperties.positionTracking = XR_TRUE;
	return XR_SUCCESS;
}

static XrResult check_system_(XrInstance instance, XrSystemId system, const char *func)
{
	XrResult r = check_handle_((uint64_t)instance, K_INSTANCE, func);
	if (r != XR_SUCCESS)
		return r;
	return system == SYSTEM_ID ? XR_SUCCESS : XR_ERROR_SYSTEM_INVALID;
}
#define check_system(instance, system) check_system_(instance, system, __func__)

static XrResult XRAPI_CALL enumerate_view_configurations(XrInstance instance, XrSystemId system, uint32_t capacity,
                                                         uint32_t *count, XrViewConfigurationType *out)
{
	XrResult r = check_system(instance, system);
	if (r != XR_SUCCESS)
		return r;
	bool fill;
	r = two_call(capacity, count, 1, &fill);
	if (!fill)
		return r;
	out[0] = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO;
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL enumerate_view_configuration_views(XrInstance instance, XrSystemId system,
                                                              XrViewConfigurationType type, uint32_t capacity,
                                                              uint32_t *count, XrViewConfigurationView *views)
{
	XrResult r = check_system(instance, system);
	if (r != XR_SUCCESS)
		return r;
	if (type != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO)
		return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
	bool fill;
	r = two_call(capacity, count, 2, &fill);
	if (!fill)
		return r;
	for (int i = 0; i < 2; i++) {
		if (views[i].type != XR_TYPE_VIEW_CONFIGURATION_VIEW)
			return XR_ERROR_VALIDATION_FAILURE;
		views[i].recommendedImageRectWidth = (uint32_t)EYE_WIDTH;
		views[i].recommendedImageRectHeight = (uint32_t)EYE_HEIGHT;
		views[i].maxImageRectWidth = 2048;
		views[i].maxImageRectHeight = 2048;
		views[i].recommendedSwapchainSampleCount = 1;
		views[i].maxSwapchainSampleCount = 1;
	}
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL enumerate_blend_modes(XrInstance instance, XrSystemId system, XrViewConfigurationType type,
                                                 uint32_t capacity, uint32_t *count, XrEnvironmentBlendMode *out)
{
	XrResult r = check_system(instance, system);
	if (r != XR_SUCCESS)
		return r;
	if (type != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO)
		return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
	bool fill;
	r = two_call(capacity, count, 1, &fill);
	if (!fill)
		return r;
	out[0] = XR_ENVIRONMENT_BLEND_MODE_OPAQUE;
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL get_gl_requirements(XrInstance instance, XrSystemId system,
                                               XrGraphicsRequirementsOpenGLKHR *req)
{
	XrResult r = check_system(instance, system);
	if (r != XR_SUCCESS)
		return r;
	CHECK_TYPE(req, XR_TYPE_GRAPHICS_REQUIREMENTS_OPENGL_KHR);
	req->minApiVersionSupported = XR_MAKE_VERSION(4, 3, 0);
	req->maxApiVersionSupported = XR_MAKE_VERSION(4, 6, 0);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL create_session(XrInstance instance, const XrSessionCreateInfo *info, XrSession *out)
{
	CHECK_TYPE(info, XR_TYPE_SESSION_CREATE_INFO);
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	XrResult r = check_system(instance, info->systemId);
	if (r != XR_SUCCESS)
		return r;
	const XrGraphicsBindingOpenGLXlibKHR *b = info->next;
	if (!b || b->type != XR_TYPE_GRAPHICS_BINDING_OPENGL_XLIB_KHR)
		return XR_ERROR_GRAPHICS_DEVICE_INVALID;
	/* the textures are made in this context: it must be the current one */
	if (!b->xDisplay || !b->glxContext || b->glxContext != glXGetCurrentContext() ||
	    b->glxDrawable != glXGetCurrentDrawable())
		return XR_ERROR_GRAPHICS_DEVICE_INVALID;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(inst, instance, K_INSTANCE);
	for (int i = 0; i < MAX_OBJECTS; i++)
		if (objects[i].kind == K_SESSION) {
			pthread_mutex_unlock(&lock);
			return XR_ERROR_LIMIT_REACHED;
		}
	object *s = new_object(K_SESSION, inst);
	if (!s) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_LIMIT_REACHED;
	}
	s->context = b->glxContext;
	s->display = b->xDisplay;
	s->last_released = -1;
	*out = (XrSession)handle_of(s);
	logf_("session visualid %u", b->visualid);
	set_state(s, XR_SESSION_STATE_IDLE);
	set_state(s, XR_SESSION_STATE_READY);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL destroy_session(XrSession session)
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	free_tree(s);
	logf_("destroy session");
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL begin_session(XrSession session, const XrSessionBeginInfo *info)
{
	CHECK_TYPE(info, XR_TYPE_SESSION_BEGIN_INFO);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	XrResult r = XR_SUCCESS;
	if (info->primaryViewConfigurationType != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO)
		r = XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
	else if (s->running)
		r = XR_ERROR_SESSION_RUNNING;
	else if (s->state != XR_SESSION_STATE_READY)
		r = XR_ERROR_SESSION_NOT_READY;
	if (r == XR_SUCCESS) {
		s->running = true;
		/* the script's clock runs from the first begin, through any pause */
		if (!s->begun_once) {
			s->begun_once = true;
			s->begin_ns = now_ns();
			s->exit_at = script.exit_at >= 0.0 ? s->begin_ns + (XrTime)(script.exit_at * 1e9) : -1;
			s->loss_at = script.loss_at >= 0.0 ? s->begin_ns + (XrTime)(script.loss_at * 1e9) : -1;
		}
		logf_("begin session");
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL end_session(XrSession session)
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	XrResult r = XR_SUCCESS;
	if (!s->running)
		r = XR_ERROR_SESSION_NOT_RUNNING;
	else if (s->state != XR_SESSION_STATE_STOPPING && s->state != XR_SESSION_STATE_LOSS_PENDING)
		r = XR_ERROR_SESSION_NOT_STOPPING;
	if (r == XR_SUCCESS) {
		s->running = false;
		logf_("end session");
		if (s->state == XR_SESSION_STATE_STOPPING && s->pausing) {
			/* stopped by the runtime, not for good: idle until `resume` */
			s->pausing = false;
			s->paused = true;
			set_state(s, XR_SESSION_STATE_IDLE);
		} else if (s->state == XR_SESSION_STATE_STOPPING) {
			set_state(s, XR_SESSION_STATE_IDLE);
			set_state(s, XR_SESSION_STATE_EXITING);
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL request_exit_session(XrSession session)
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	XrResult r = XR_SUCCESS;
	if (!s->running)
		r = XR_ERROR_SESSION_NOT_RUNNING;
	else {
		logf_("request exit");
		wind_down(s);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL wait_frame(XrSession session, const XrFrameWaitInfo *info, XrFrameState *state)
{
	if (info && info->type != XR_TYPE_FRAME_WAIT_INFO)
		return XR_ERROR_VALIDATION_FAILURE;
	CHECK_TYPE(state, XR_TYPE_FRAME_STATE);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	if (s->state == XR_SESSION_STATE_LOSS_PENDING) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_SESSION_LOST;
	}
	if (!s->running) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_SESSION_NOT_RUNNING;
	}
	int64_t period = (int64_t)(script.period * 1e9);
	/* frames are shown on a fixed grid of display periods from the session's start; the
	 * one predicted is the next grid time at least a period away */
	int64_t t = now_ns();
	int64_t index = (t - s->begin_ns) / period + 1;
	XrTime predicted = s->begin_ns + (index + 1) * period;
	if (predicted <= s->last_predicted)
		predicted = s->last_predicted + period;
	int64_t wake = predicted - 2 * period;
	pthread_mutex_unlock(&lock);
	if (wake > t) {
		struct timespec ts = {(time_t)(wake / 1000000000), (long)(wake % 1000000000)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	pthread_mutex_lock(&lock);
	s = lookup((uint64_t)session, K_SESSION);
	if (!s) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_HANDLE_INVALID;
	}
	s->last_predicted = predicted;
	s->frame_waited = true;
	s->frames_waited++;
	frames_waited_total++;
	state->predictedDisplayTime = predicted;
	state->predictedDisplayPeriod = period;
	state->shouldRender = s->state == XR_SESSION_STATE_VISIBLE || s->state == XR_SESSION_STATE_FOCUSED;
	logf_("frame_wait %lld predicted %lld period %lld render %d", (long long)s->frames_waited, (long long)predicted,
	      (long long)period, (int)state->shouldRender);
	/* scripted changes happen between frames */
	if (s->loss_at >= 0 && predicted >= s->loss_at && !s->lost) {
		s->lost = true;
		set_state(s, XR_SESSION_STATE_LOSS_PENDING);
	} else if (s->exit_at >= 0 && predicted >= s->exit_at && !s->exit_requested) {
		s->exit_requested = true;
		wind_down(s);
	} else if (script.pause_at >= 0.0 && script_time(s, predicted) >= script.pause_at && !s->paused && !s->pausing) {
		s->pausing = true;
		wind_down(s);
	} else if (script.unfocus_at >= 0.0 && script_time(s, predicted) >= script.unfocus_at && !s->unfocused &&
	           s->state == XR_SESSION_STATE_FOCUSED) {
		s->unfocused = true;
		set_state(s, XR_SESSION_STATE_VISIBLE);
	} else if (script.refocus_at >= 0.0 && script_time(s, predicted) >= script.refocus_at && s->unfocused &&
	           !s->refocused && s->state == XR_SESSION_STATE_VISIBLE) {
		s->refocused = true;
		set_state(s, XR_SESSION_STATE_FOCUSED);
	}
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL begin_frame(XrSession session, const XrFrameBeginInfo *info)
{
	if (info && info->type != XR_TYPE_FRAME_BEGIN_INFO)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	XrResult r = XR_SUCCESS;
	if (!s->running)
		r = XR_ERROR_SESSION_NOT_RUNNING;
	else if (!s->frame_waited)
		r = XR_ERROR_CALL_ORDER_INVALID;
	else {
		r = s->frame_begun ? XR_FRAME_DISCARDED : XR_SUCCESS;
		s->frame_begun = true;
		s->frame_waited = false;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static void capture(object *chain, int image, const char *path)
{
	size_t n = (size_t)chain->width * (size_t)chain->height * 3;
	unsigned char *rgb = malloc(n);
	FILE *f = rgb ? fopen(path, "wb") : NULL;
	if (f) {
		GLint previous;
		glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
		glBindTexture(GL_TEXTURE_2D, chain->images[image]);
		glPixelStorei(GL_PACK_ALIGNMENT, 1);
		glGetTexImage(GL_TEXTURE_2D, 0, GL_RGB, GL_UNSIGNED_BYTE, rgb);
		glBindTexture(GL_TEXTURE_2D, (GLuint)previous);
		fprintf(f, "P6\n%d %d\n255\n", chain->width, chain->height);
		/* GL's rows run bottom up */
		for (int y = chain->height - 1; y >= 0; y--)
			fwrite(rgb + (size_t)y * (size_t)chain->width * 3, 1, (size_t)chain->width * 3, f);
		fclose(f);
		logf_("capture %s", path);
	}
	free(rgb);
}

static XrResult XRAPI_CALL end_frame(XrSession session, const XrFrameEndInfo *info)
{
	CHECK_TYPE(info, XR_TYPE_FRAME_END_INFO);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	XrResult r = XR_SUCCESS;
	if (!s->running)
		r = XR_ERROR_SESSION_NOT_RUNNING;
	else if (!s->frame_begun)
		r = XR_ERROR_CALL_ORDER_INVALID;
	else if (info->displayTime <= 0)
		r = XR_ERROR_TIME_INVALID;
	else if (info->environmentBlendMode != XR_ENVIRONMENT_BLEND_MODE_OPAQUE)
		r = XR_ERROR_ENVIRONMENT_BLEND_MODE_UNSUPPORTED;
	else if (info->layerCount > XR_MIN_COMPOSITION_LAYERS_SUPPORTED || (info->layerCount > 0 && !info->layers))
		r = XR_ERROR_LAYER_LIMIT_EXCEEDED;
	object *capture_chain = NULL;
	int capture_image = -1;
	for (uint32_t i = 0; r == XR_SUCCESS && i < info->layerCount; i++) {
		const XrCompositionLayerProjection *p = (const XrCompositionLayerProjection *)info->layers[i];
		if (!p || p->type != XR_TYPE_COMPOSITION_LAYER_PROJECTION) {
			r = XR_ERROR_LAYER_INVALID;
			break;
		}
		if (!lookup((uint64_t)p->space, K_SPACE)) {
			r = XR_ERROR_HANDLE_INVALID;
			break;
		}
		if (p->viewCount != 2 || !p->views) {
			r = XR_ERROR_VALIDATION_FAILURE;
			break;
		}
		for (uint32_t v = 0; v < 2 && r == XR_SUCCESS; v++) {
			const XrCompositionLayerProjectionView *pv = &p->views[v];
			object *chain = lookup((uint64_t)pv->subImage.swapchain, K_SWAPCHAIN);
			if (pv->type != XR_TYPE_COMPOSITION_LAYER_PROJECTION_VIEW || !pose_valid(&pv->pose))
				r = XR_ERROR_VALIDATION_FAILURE;
			else if (!chain)
				r = XR_ERROR_HANDLE_INVALID;
			else if (chain->last_released < 0)
				r = XR_ERROR_LAYER_INVALID; /* no image released yet */
			else if (pv->subImage.imageRect.offset.x < 0 || pv->subImage.imageRect.offset.y < 0 ||
			         pv->subImage.imageRect.extent.width <= 0 || pv->subImage.imageRect.extent.height <= 0 ||
			         pv->subImage.imageRect.offset.x + pv->subImage.imageRect.extent.width > chain->width ||
			         pv->subImage.imageRect.offset.y + pv->subImage.imageRect.extent.height > chain->height)
				r = XR_ERROR_SWAPCHAIN_RECT_INVALID;
			else if (v == 0)
				capture_chain = chain, capture_image = chain->last_released;
		}
		if (r == XR_SUCCESS)
			logf_("layer projection views 2 fov %.4f %.4f %.4f %.4f", (double)p->views[0].fov.angleLeft,
			      (double)p->views[0].fov.angleRight, (double)p->views[0].fov.angleUp,
			      (double)p->views[0].fov.angleDown);
	}
	if (r == XR_SUCCESS) {
		s->frame_begun = false;
		s->frames_ended++;
		logf_("frame_end %lld display %lld layers %u", (long long)s->frames_ended, (long long)info->displayTime,
		      info->layerCount);
		const char *path = getenv("TELA_XR_TEST_EYE");
		if (capture_chain && path && !s->captured && script.capture_at >= 0.0 &&
		    script_time(s, info->displayTime) >= script.capture_at) {
			s->captured = true;
			capture(capture_chain, capture_image, path);
		}
		/* the compositor shows the first frame: the session becomes visible, then focused */
		if (s->state == XR_SESSION_STATE_READY && !s->exit_requested) {
			set_state(s, XR_SESSION_STATE_SYNCHRONIZED);
			set_state(s, XR_SESSION_STATE_VISIBLE);
			set_state(s, XR_SESSION_STATE_FOCUSED);
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL locate_views(XrSession session, const XrViewLocateInfo *info, XrViewState *state,
                                        uint32_t capacity, uint32_t *count, XrView *views)
{
	CHECK_TYPE(info, XR_TYPE_VIEW_LOCATE_INFO);
	CHECK_TYPE(state, XR_TYPE_VIEW_STATE);
	if (!count)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	LOCKED_LOOKUP(space, info->space, K_SPACE);
	XrResult r = XR_SUCCESS;
	if (info->viewConfigurationType != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO)
		r = XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
	else if (info->displayTime <= 0)
		r = XR_ERROR_TIME_INVALID;
	else if (space->parent != s)
		r = XR_ERROR_VALIDATION_FAILURE;
	*count = 2;
	if (r == XR_SUCCESS && capacity > 0 && capacity < 2)
		r = XR_ERROR_SIZE_INSUFFICIENT;
	pose base;
	if (r == XR_SUCCESS && capacity >= 2) {
		pose head = head_at(s, info->displayTime);
		bool located = space_in_stage(space, info->displayTime, &base);
		pose to_base = inverse(&base);
		state->viewStateFlags = located ? XR_VIEW_STATE_ORIENTATION_VALID_BIT | XR_VIEW_STATE_POSITION_VALID_BIT |
		                                      XR_VIEW_STATE_ORIENTATION_TRACKED_BIT | XR_VIEW_STATE_POSITION_TRACKED_BIT
		                                : 0;
		for (int v = 0; v < 2; v++) {
			if (views[v].type != XR_TYPE_VIEW) {
				r = XR_ERROR_VALIDATION_FAILURE;
				break;
			}
			/* 64 mm between the eyes; each eye sees a little more to its own side */
			pose eye = {{v == 0 ? -0.032f : 0.032f, 0.0f, 0.0f}, {0, 0, 0, 1}};
			pose in_stage = compose(&head, &eye);
			pose p = located ? compose(&to_base, &in_stage) : IDENTITY;
			views[v].pose = to_xr(&p);
			views[v].fov.angleLeft = v == 0 ? -0.80f : -0.70f;
			views[v].fov.angleRight = v == 0 ? 0.70f : 0.80f;
			views[v].fov.angleUp = 0.75f;
			views[v].fov.angleDown = -0.80f;
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL enumerate_reference_spaces(XrSession session, uint32_t capacity, uint32_t *count,
                                                      XrReferenceSpaceType *out)
{
	XrResult r = check_handle((uint64_t)session, K_SESSION);
	bool fill = false;
	if (r == XR_SUCCESS)
		r = two_call(capacity, count, 3, &fill);
	if (!fill)
		return r;
	out[0] = XR_REFERENCE_SPACE_TYPE_VIEW;
	out[1] = XR_REFERENCE_SPACE_TYPE_LOCAL;
	out[2] = XR_REFERENCE_SPACE_TYPE_STAGE;
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL create_reference_space(XrSession session, const XrReferenceSpaceCreateInfo *info,
                                                  XrSpace *out)
{
	CHECK_TYPE(info, XR_TYPE_REFERENCE_SPACE_CREATE_INFO);
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	if (info->referenceSpaceType != XR_REFERENCE_SPACE_TYPE_VIEW &&
	    info->referenceSpaceType != XR_REFERENCE_SPACE_TYPE_LOCAL &&
	    info->referenceSpaceType != XR_REFERENCE_SPACE_TYPE_STAGE)
		return XR_ERROR_REFERENCE_SPACE_UNSUPPORTED;
	if (!pose_valid(&info->poseInReferenceSpace))
		return XR_ERROR_POSE_INVALID;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	object *sp = new_object(K_SPACE, s);
	if (!sp) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_LIMIT_REACHED;
	}
	sp->space_kind = (int)info->referenceSpaceType;
	sp->offset = from_xr(&info->poseInReferenceSpace);
	*out = (XrSpace)handle_of(sp);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL destroy_space(XrSpace space)
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(sp, space, K_SPACE);
	free_tree(sp);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL locate_space(XrSpace space, XrSpace base, XrTime time, XrSpaceLocation *location)
{
	CHECK_TYPE(location, XR_TYPE_SPACE_LOCATION);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(a, space, K_SPACE);
	LOCKED_LOOKUP(b, base, K_SPACE);
	XrResult r = XR_SUCCESS;
	if (time <= 0)
		r = XR_ERROR_TIME_INVALID;
	else if (a->parent != b->parent)
		r = XR_ERROR_VALIDATION_FAILURE;
	pose pa, pb;
	if (r == XR_SUCCESS) {
		if (space_in_stage(a, time, &pa) && space_in_stage(b, time, &pb)) {
			pose to_b = inverse(&pb);
			pose p = compose(&to_b, &pa);
			location->pose = to_xr(&p);
			location->locationFlags = XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT |
			                          XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT |
			                          XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
		} else {
			location->pose = to_xr(&IDENTITY);
			location->locationFlags = 0;
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL enumerate_swapchain_formats(XrSession session, uint32_t capacity, uint32_t *count,
                                                       int64_t *formats)
{
	XrResult r = check_handle((uint64_t)session, K_SESSION);
	bool fill = false;
	if (r == XR_SUCCESS)
		r = two_call(capacity, count, 2, &fill);
	if (!fill)
		return r;
	/* a compositor's preference order: sRGB first */
	formats[0] = GL_SRGB8_ALPHA8;
	formats[1] = GL_RGBA8;
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL create_swapchain(XrSession session, const XrSwapchainCreateInfo *info, XrSwapchain *out)
{
	CHECK_TYPE(info, XR_TYPE_SWAPCHAIN_CREATE_INFO);
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	if (info->format != GL_SRGB8_ALPHA8 && info->format != GL_RGBA8)
		return XR_ERROR_SWAPCHAIN_FORMAT_UNSUPPORTED;
	if (info->width == 0 || info->height == 0 || info->width > 4096 || info->height > 4096 || info->sampleCount != 1 ||
	    info->faceCount != 1 || info->arraySize != 1 || info->mipCount != 1)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	if (glXGetCurrentContext() != s->context) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_GRAPHICS_DEVICE_INVALID;
	}
	object *c = new_object(K_SWAPCHAIN, s);
	if (!c) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_LIMIT_REACHED;
	}
	c->width = (int)info->width, c->height = (int)info->height;
	c->format = info->format;
	c->last_released = -1;
	GLint previous;
	glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
	glGenTextures(MAX_IMAGES, c->images);
	for (int i = 0; i < MAX_IMAGES; i++) {
		glBindTexture(GL_TEXTURE_2D, c->images[i]);
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
		glTexImage2D(GL_TEXTURE_2D, 0, (GLint)info->format, c->width, c->height, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
	}
	glBindTexture(GL_TEXTURE_2D, (GLuint)previous);
	logf_("swapchain %dx%d format 0x%llx", c->width, c->height, (unsigned long long)info->format);
	*out = (XrSwapchain)handle_of(c);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL destroy_swapchain(XrSwapchain swapchain)
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(c, swapchain, K_SWAPCHAIN);
	free_tree(c);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL enumerate_swapchain_images(XrSwapchain swapchain, uint32_t capacity, uint32_t *count,
                                                      XrSwapchainImageBaseHeader *images)
{
	if (!count)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(c, swapchain, K_SWAPCHAIN);
	XrResult r = XR_SUCCESS;
	*count = MAX_IMAGES;
	if (capacity > 0 && capacity < MAX_IMAGES)
		r = XR_ERROR_SIZE_INSUFFICIENT;
	else if (capacity > 0) {
		XrSwapchainImageOpenGLKHR *gl = (XrSwapchainImageOpenGLKHR *)images;
		for (int i = 0; i < MAX_IMAGES; i++) {
			if (gl[i].type != XR_TYPE_SWAPCHAIN_IMAGE_OPENGL_KHR) {
				r = XR_ERROR_VALIDATION_FAILURE;
				break;
			}
			gl[i].image = c->images[i];
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL acquire_image(XrSwapchain swapchain, const XrSwapchainImageAcquireInfo *info,
                                         uint32_t *index)
{
	if ((info && info->type != XR_TYPE_SWAPCHAIN_IMAGE_ACQUIRE_INFO) || !index)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(c, swapchain, K_SWAPCHAIN);
	XrResult r = XR_SUCCESS;
	if (c->acquired_count == MAX_IMAGES)
		r = XR_ERROR_CALL_ORDER_INVALID;
	else {
		int i = c->acquire_next;
		c->acquire_next = (i + 1) % MAX_IMAGES;
		c->acquired_count++;
		*index = (uint32_t)i;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL wait_image(XrSwapchain swapchain, const XrSwapchainImageWaitInfo *info)
{
	CHECK_TYPE(info, XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(c, swapchain, K_SWAPCHAIN);
	XrResult r = XR_SUCCESS;
	if (c->acquired_count == 0 || c->waited)
		r = XR_ERROR_CALL_ORDER_INVALID;
	else
		c->waited = true;
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL release_image(XrSwapchain swapchain, const XrSwapchainImageReleaseInfo *info)
{
	if (info && info->type != XR_TYPE_SWAPCHAIN_IMAGE_RELEASE_INFO)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(c, swapchain, K_SWAPCHAIN);
	XrResult r = XR_SUCCESS;
	if (!c->waited)
		r = XR_ERROR_CALL_ORDER_INVALID;
	else {
		/* images are released in the order they were acquired */
		c->last_released = (c->acquire_next - c->acquired_count + MAX_IMAGES) % MAX_IMAGES;
		c->acquired_count--;
		c->waited = false;
		/* the compositor reads what was drawn: let GL finish it first */
		glFlush();
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* ---- paths and actions ---------------------------------------------------------------------- */

static XrResult XRAPI_CALL string_to_path(XrInstance instance, const char *string, XrPath *out)
{
	if (!string || !out)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, instance, K_INSTANCE);
	(void)o;
	XrResult r = XR_SUCCESS;
	size_t n = strlen(string);
	if (n == 0 || n >= XR_MAX_PATH_LENGTH || string[0] != '/' || string[n - 1] == '/' || strstr(string, "//"))
		r = XR_ERROR_PATH_FORMAT_INVALID;
	for (size_t i = 0; r == XR_SUCCESS && i < n; i++)
		if (!(string[i] >= 'a' && string[i] <= 'z') && !(string[i] >= '0' && string[i] <= '9') &&
		    !strchr("/-_.", string[i]))
			r = XR_ERROR_PATH_FORMAT_INVALID;
	if (r == XR_SUCCESS) {
		int i = 0;
		while (i < path_count && strcmp(paths[i], string) != 0)
			i++;
		if (i == path_count) {
			if (path_count == MAX_PATHS)
				r = XR_ERROR_PATH_COUNT_EXCEEDED;
			else
				snprintf(paths[path_count++], XR_MAX_PATH_LENGTH, "%s", string);
		}
		*out = (XrPath)(i + 1);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static const char *path_text(XrPath p) { return p >= 1 && p <= (XrPath)path_count ? paths[p - 1] : NULL; }

static XrResult XRAPI_CALL path_to_string(XrInstance instance, XrPath path, uint32_t capacity, uint32_t *count,
                                          char *buffer)
{
	if (!count)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, instance, K_INSTANCE);
	(void)o;
	const char *t = path_text(path);
	XrResult r = XR_SUCCESS;
	if (!t)
		r = XR_ERROR_PATH_INVALID;
	else {
		*count = (uint32_t)strlen(t) + 1;
		if (capacity > 0 && capacity < *count)
			r = XR_ERROR_SIZE_INSUFFICIENT;
		else if (capacity > 0)
			memcpy(buffer, t, *count);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL create_action_set(XrInstance instance, const XrActionSetCreateInfo *info, XrActionSet *out)
{
	CHECK_TYPE(info, XR_TYPE_ACTION_SET_CREATE_INFO);
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	if (info->actionSetName[0] == 0)
		return XR_ERROR_NAME_INVALID;
	if (info->localizedActionSetName[0] == 0)
		return XR_ERROR_LOCALIZED_NAME_INVALID;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(inst, instance, K_INSTANCE);
	object *o = new_object(K_ACTION_SET, inst);
	if (!o) {
		pthread_mutex_unlock(&lock);
		return XR_ERROR_LIMIT_REACHED;
	}
	snprintf(o->name, sizeof o->name, "%s", info->actionSetName);
	*out = (XrActionSet)handle_of(o);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL destroy_action_set(XrActionSet set)
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, set, K_ACTION_SET);
	free_tree(o);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

static int hand_of(XrPath p)
{
	const char *t = path_text(p);
	if (!t)
		return -1;
	return strcmp(t, "/user/hand/left") == 0 ? 0 : strcmp(t, "/user/hand/right") == 0 ? 1 : -1;
}

static XrResult XRAPI_CALL create_action(XrActionSet set, const XrActionCreateInfo *info, XrAction *out)
{
	CHECK_TYPE(info, XR_TYPE_ACTION_CREATE_INFO);
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	if (info->actionName[0] == 0)
		return XR_ERROR_NAME_INVALID;
	if (info->localizedActionName[0] == 0)
		return XR_ERROR_LOCALIZED_NAME_INVALID;
	if (info->actionType != XR_ACTION_TYPE_BOOLEAN_INPUT && info->actionType != XR_ACTION_TYPE_POSE_INPUT &&
	    info->actionType != XR_ACTION_TYPE_VIBRATION_OUTPUT && info->actionType != XR_ACTION_TYPE_FLOAT_INPUT)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, set, K_ACTION_SET);
	XrResult r = XR_SUCCESS;
	if (o->set_attached)
		r = XR_ERROR_ACTIONSETS_ALREADY_ATTACHED;
	else if (info->countSubactionPaths > 2)
		r = XR_ERROR_PATH_UNSUPPORTED;
	for (uint32_t i = 0; r == XR_SUCCESS && i < info->countSubactionPaths; i++)
		if (!path_text(info->subactionPaths[i]))
			r = XR_ERROR_PATH_INVALID;
		else if (hand_of(info->subactionPaths[i]) < 0)
			r = XR_ERROR_PATH_UNSUPPORTED;
	object *a = r == XR_SUCCESS ? new_object(K_ACTION, o) : NULL;
	if (r == XR_SUCCESS && !a)
		r = XR_ERROR_LIMIT_REACHED;
	if (r == XR_SUCCESS) {
		snprintf(a->name, sizeof a->name, "%s", info->actionName);
		a->action_type = info->actionType;
		a->subaction_count = (int)info->countSubactionPaths;
		for (int i = 0; i < a->subaction_count; i++)
			a->subactions[i] = info->subactionPaths[i];
		*out = (XrAction)handle_of(a);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL destroy_action(XrAction action)
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, action, K_ACTION);
	free_tree(o);
	pthread_mutex_unlock(&lock);
	return XR_SUCCESS;
}

/* The simple controller's inputs and outputs (OpenXR 1.0, 6.4 "Khronos Simple
 * Controller Profile"), per hand. */
static const char *const SIMPLE_COMPONENTS[] = {"input/select/click", "input/menu/click", "input/grip/pose",
                                                 "input/aim/pose", "output/haptic"};

static XrResult XRAPI_CALL suggest_bindings(XrInstance instance, const XrInteractionProfileSuggestedBinding *s)
{
	CHECK_TYPE(s, XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING);
	if (s->countSuggestedBindings == 0 || !s->suggestedBindings)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(inst, instance, K_INSTANCE);
	(void)inst;
	const char *profile = path_text(s->interactionProfile);
	XrResult r = XR_SUCCESS;
	if (!profile)
		r = XR_ERROR_PATH_INVALID;
	else if (strcmp(profile, "/interaction_profiles/khr/simple_controller") != 0)
		r = XR_ERROR_PATH_UNSUPPORTED; /* this headset knows only the simple controller */
	for (uint32_t i = 0; r == XR_SUCCESS && i < s->countSuggestedBindings; i++) {
		object *a = lookup((uint64_t)s->suggestedBindings[i].action, K_ACTION);
		const char *b = path_text(s->suggestedBindings[i].binding);
		if (!a)
			r = XR_ERROR_HANDLE_INVALID;
		else if (a->parent->set_attached)
			r = XR_ERROR_ACTIONSETS_ALREADY_ATTACHED;
		else if (!b)
			r = XR_ERROR_PATH_INVALID;
		else {
			int hand = strncmp(b, "/user/hand/left/", 16) == 0    ? 0
			           : strncmp(b, "/user/hand/right/", 17) == 0 ? 1
			                                                      : -1;
			const char *component = hand < 0 ? "" : b + (hand == 0 ? 16 : 17);
			bool known = false;
			for (size_t k = 0; k < sizeof SIMPLE_COMPONENTS / sizeof *SIMPLE_COMPONENTS; k++)
				known = known || strcmp(component, SIMPLE_COMPONENTS[k]) == 0;
			if (!known)
				r = XR_ERROR_PATH_UNSUPPORTED;
		}
	}
	/* valid: the suggestion replaces any earlier one (the only profile there is) */
	for (uint32_t i = 0; r == XR_SUCCESS && i < s->countSuggestedBindings; i++) {
		object *a = lookup((uint64_t)s->suggestedBindings[i].action, K_ACTION);
		const char *b = path_text(s->suggestedBindings[i].binding);
		a->bound[strncmp(b, "/user/hand/left/", 16) == 0 ? 0 : 1] = true;
		logf_("binding %s %s", a->name, b);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL attach_action_sets(XrSession session, const XrSessionActionSetsAttachInfo *info)
{
	CHECK_TYPE(info, XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO);
	if (info->countActionSets == 0 || !info->actionSets)
		return XR_ERROR_VALIDATION_FAILURE;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	XrResult r = s->attached ? XR_ERROR_ACTIONSETS_ALREADY_ATTACHED : XR_SUCCESS;
	for (uint32_t i = 0; r == XR_SUCCESS && i < info->countActionSets; i++)
		if (!lookup((uint64_t)info->actionSets[i], K_ACTION_SET))
			r = XR_ERROR_HANDLE_INVALID;
	for (uint32_t i = 0; r == XR_SUCCESS && i < info->countActionSets; i++)
		lookup((uint64_t)info->actionSets[i], K_ACTION_SET)->set_attached = true;
	if (r == XR_SUCCESS) {
		s->attached = true;
		logf_("attach %u", info->countActionSets);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL create_action_space(XrSession session, const XrActionSpaceCreateInfo *info, XrSpace *out)
{
	CHECK_TYPE(info, XR_TYPE_ACTION_SPACE_CREATE_INFO);
	if (!out)
		return XR_ERROR_VALIDATION_FAILURE;
	if (!pose_valid(&info->poseInActionSpace))
		return XR_ERROR_POSE_INVALID;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	LOCKED_LOOKUP(a, info->action, K_ACTION);
	XrResult r = XR_SUCCESS;
	if (a->action_type != XR_ACTION_TYPE_POSE_INPUT)
		r = XR_ERROR_ACTION_TYPE_MISMATCH;
	else if (info->subactionPath != XR_NULL_PATH) {
		bool listed = false;
		for (int i = 0; i < a->subaction_count; i++)
			listed = listed || a->subactions[i] == info->subactionPath;
		if (!listed)
			r = XR_ERROR_PATH_UNSUPPORTED;
	}
	object *sp = r == XR_SUCCESS ? new_object(K_SPACE, s) : NULL;
	if (r == XR_SUCCESS && !sp)
		r = XR_ERROR_LIMIT_REACHED;
	if (r == XR_SUCCESS) {
		sp->space_kind = 0;
		sp->action = a;
		sp->subaction = info->subactionPath;
		sp->offset = from_xr(&info->poseInActionSpace);
		*out = (XrSpace)handle_of(sp);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL sync_actions(XrSession session, const XrActionsSyncInfo *info)
{
	CHECK_TYPE(info, XR_TYPE_ACTIONS_SYNC_INFO);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	XrResult r = XR_SUCCESS;
	for (uint32_t i = 0; r == XR_SUCCESS && i < info->countActiveActionSets; i++) {
		object *set = lookup((uint64_t)info->activeActionSets[i].actionSet, K_ACTION_SET);
		if (!set)
			r = XR_ERROR_HANDLE_INVALID;
		else if (!set->set_attached)
			r = XR_ERROR_ACTIONSET_NOT_ATTACHED;
	}
	if (r == XR_SUCCESS && s->state != XR_SESSION_STATE_FOCUSED)
		r = XR_SESSION_NOT_FOCUSED;
	if (r == XR_SUCCESS) {
		/* the buttons as of the newest predicted display time */
		double t = script_time(s, s->last_predicted > 0 ? s->last_predicted : now_ns());
		for (int i = 0; i < MAX_OBJECTS; i++) {
			object *a = &objects[i];
			if (a->kind != K_ACTION || a->action_type != XR_ACTION_TYPE_BOOLEAN_INPUT)
				continue;
			for (int hand = 0; hand < 2; hand++) {
				pose p;
				bool select = false;
				track_at(&script.hands[hand], t, &p, &select);
				select = select && a->bound[hand];
				a->changed[hand] = select != a->state_bool[hand];
				if (a->changed[hand])
					logf_("select %s %d", hand == 0 ? "left" : "right", (int)select);
				a->state_bool[hand] = select;
			}
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* The hands an action state query covers: one, or both when no subaction path is given. */
static XrResult query_hands(const object *a, XrPath subaction, int *first, int *last)
{
	if (subaction == XR_NULL_PATH) {
		*first = 0, *last = 1;
		return XR_SUCCESS;
	}
	bool listed = false;
	for (int i = 0; i < a->subaction_count; i++)
		listed = listed || a->subactions[i] == subaction;
	if (!listed)
		return XR_ERROR_PATH_UNSUPPORTED;
	*first = *last = hand_of(subaction);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL get_boolean(XrSession session, const XrActionStateGetInfo *info, XrActionStateBoolean *out)
{
	CHECK_TYPE(info, XR_TYPE_ACTION_STATE_GET_INFO);
	CHECK_TYPE(out, XR_TYPE_ACTION_STATE_BOOLEAN);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	LOCKED_LOOKUP(a, info->action, K_ACTION);
	int first, last;
	XrResult r = !s->attached || !a->parent->set_attached ? XR_ERROR_ACTIONSET_NOT_ATTACHED
	             : a->action_type != XR_ACTION_TYPE_BOOLEAN_INPUT ? XR_ERROR_ACTION_TYPE_MISMATCH
	                                                               : query_hands(a, info->subactionPath, &first, &last);
	if (r == XR_SUCCESS) {
		out->currentState = XR_FALSE, out->changedSinceLastSync = XR_FALSE, out->isActive = XR_FALSE;
		for (int h = first; h <= last; h++) {
			out->isActive |= a->bound[h];
			out->currentState |= a->state_bool[h];
			out->changedSinceLastSync |= a->changed[h];
		}
		out->lastChangeTime = s->last_predicted;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL get_pose(XrSession session, const XrActionStateGetInfo *info, XrActionStatePose *out)
{
	CHECK_TYPE(info, XR_TYPE_ACTION_STATE_GET_INFO);
	CHECK_TYPE(out, XR_TYPE_ACTION_STATE_POSE);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	LOCKED_LOOKUP(a, info->action, K_ACTION);
	int first, last;
	XrResult r = !s->attached || !a->parent->set_attached ? XR_ERROR_ACTIONSET_NOT_ATTACHED
	             : a->action_type != XR_ACTION_TYPE_POSE_INPUT ? XR_ERROR_ACTION_TYPE_MISMATCH
	                                                            : query_hands(a, info->subactionPath, &first, &last);
	if (r == XR_SUCCESS) {
		out->isActive = XR_FALSE;
		for (int h = first; h <= last; h++)
			out->isActive |= a->bound[h] && script.hands[h].count > 0;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL apply_haptic(XrSession session, const XrHapticActionInfo *info,
                                        const XrHapticBaseHeader *feedback)
{
	CHECK_TYPE(info, XR_TYPE_HAPTIC_ACTION_INFO);
	if (!feedback || feedback->type != XR_TYPE_HAPTIC_VIBRATION)
		return XR_ERROR_VALIDATION_FAILURE;
	const XrHapticVibration *v = (const XrHapticVibration *)feedback;
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	LOCKED_LOOKUP(a, info->action, K_ACTION);
	int first, last;
	XrResult r = !s->attached || !a->parent->set_attached ? XR_ERROR_ACTIONSET_NOT_ATTACHED
	             : a->action_type != XR_ACTION_TYPE_VIBRATION_OUTPUT ? XR_ERROR_ACTION_TYPE_MISMATCH
	                                                                  : query_hands(a, info->subactionPath, &first, &last);
	if (r == XR_SUCCESS && (!(v->amplitude >= 0.0f) || v->amplitude > 1.0f))
		r = XR_ERROR_VALIDATION_FAILURE;
	if (r == XR_SUCCESS && s->state != XR_SESSION_STATE_FOCUSED)
		r = XR_SESSION_NOT_FOCUSED;
	if (r == XR_SUCCESS)
		logf_("haptic %s amplitude %.4f duration %lld frequency %.1f t %.4f",
		      first == last ? (first == 0 ? "left" : "right") : "both", (double)v->amplitude, (long long)v->duration,
		      (double)v->frequency, script_time(s, s->last_predicted));
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL stop_haptic(XrSession session, const XrHapticActionInfo *info)
{
	CHECK_TYPE(info, XR_TYPE_HAPTIC_ACTION_INFO);
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(s, session, K_SESSION);
	LOCKED_LOOKUP(a, info->action, K_ACTION);
	int first, last;
	XrResult r = !s->attached || !a->parent->set_attached ? XR_ERROR_ACTIONSET_NOT_ATTACHED
	             : a->action_type != XR_ACTION_TYPE_VIBRATION_OUTPUT ? XR_ERROR_ACTION_TYPE_MISMATCH
	                                                                  : query_hands(a, info->subactionPath, &first, &last);
	if (r == XR_SUCCESS && s->state != XR_SESSION_STATE_FOCUSED)
		r = XR_SESSION_NOT_FOCUSED;
	if (r == XR_SUCCESS)
		logf_("haptic_stop %s t %.4f", first == last ? (first == 0 ? "left" : "right") : "both",
		      script_time(s, s->last_predicted));
	pthread_mutex_unlock(&lock);
	return r;
}

static XrResult XRAPI_CALL result_to_string(XrInstance instance, XrResult value, char buffer[XR_MAX_RESULT_STRING_SIZE])
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, instance, K_INSTANCE);
	(void)o;
	pthread_mutex_unlock(&lock);
	const char *name = NULL;
	switch (value) {
#define NAME_CASE(n, v)                                                                                \
	case n: name = #n; break;
		XR_LIST_ENUM_XrResult(NAME_CASE)
#undef NAME_CASE
	default: break;
	}
	if (name)
		snprintf(buffer, XR_MAX_RESULT_STRING_SIZE, "%s", name);
	else
		snprintf(buffer, XR_MAX_RESULT_STRING_SIZE, "XR_%s_%d", value < 0 ? "UNKNOWN_FAILURE" : "UNKNOWN_SUCCESS",
		         (int)value);
	return XR_SUCCESS;
}

static XrResult XRAPI_CALL structure_type_to_string(XrInstance instance, XrStructureType value,
                                                    char buffer[XR_MAX_STRUCTURE_NAME_SIZE])
{
	pthread_mutex_lock(&lock);
	LOCKED_LOOKUP(o, instance, K_INSTANCE);
	(void)o;
	pthread_mutex_unlock(&lock);
	const char *name = NULL;
	switch (value) {
#define NAME_CASE(n, v)                                                                                \
	case n: name = #n; break;
		XR_LIST_ENUM_XrStructureType(NAME_CASE)
#undef NAME_CASE
	default: break;
	}
	snprintf(buffer, XR_MAX_STRUCTURE_NAME_SIZE, "%s", name ? name : "XR_UNKNOWN_STRUCTURE_TYPE");
	return XR_SUCCESS;
}

/* ---- dispatch ------------------------------------------------------------------------------- */

static XrResult XRAPI_CALL get_instance_proc_addr(XrInstance instance, const char *name, PFN_xrVoidFunction *out);

static const struct {
	const char *name;
	PFN_xrVoidFunction fn;
	bool global; /* callable without an instance */
	const char *func; /* the function's C name (__func__ in it) */
} FUNCTIONS[] = {
#define F(n, f) {n, (PFN_xrVoidFunction)(f), false, #f}
    {"xrGetInstanceProcAddr", (PFN_xrVoidFunction)get_instance_proc_addr, true, "get_instance_proc_addr"},
    {"xrEnumerateInstanceExtensionProperties", (PFN_xrVoidFunction)enumerate_extensions, true, "enumerate_extensions"},
    {"xrCreateInstance", (PFN_xrVoidFunction)create_instance, true, "create_instance"},
    F("xrDestroyInstance", destroy_instance),
    F("xrGetInstanceProperties", get_instance_properties),
    F("xrPollEvent", poll_event),
    F("xrResultToString", result_to_string),
    F("xrStructureTypeToString", structure_type_to_string),
    F("xrGetSystem", get_system),
    F("xrGetSystemProperties", get_system_properties),
    F("xrEnumerateViewConfigurations", enumerate_view_configurations),
    F("xrEnumerateViewConfigurationViews", enumerate_view_configuration_views),
    F("xrEnumerateEnvironmentBlendModes", enumerate_blend_modes),
    F("xrGetOpenGLGraphicsRequirementsKHR", get_gl_requirements),
    F("xrCreateSession", create_session),
    F("xrDestroySession", destroy_session),
    F("xrBeginSession", begin_session),
    F("xrEndSession", end_session),
    F("xrRequestExitSession", request_exit_session),
    F("xrWaitFrame", wait_frame),
    F("xrBeginFrame", begin_frame),
    F("xrEndFrame", end_frame),
    F("xrLocateViews", locate_views),
    F("xrEnumerateReferenceSpaces", enumerate_reference_spaces),
    F("xrCreateReferenceSpace", create_reference_space),
    F("xrDestroySpace", destroy_space),
    F("xrLocateSpace", locate_space),
    F("xrEnumerateSwapchainFormats", enumerate_swapchain_formats),
    F("xrCreateSwapchain", create_swapchain),
    F("xrDestroySwapchain", destroy_swapchain),
    F("xrEnumerateSwapchainImages", enumerate_swapchain_images),
    F("xrAcquireSwapchainImage", acquire_image),
    F("xrWaitSwapchainImage", wait_image),
    F("xrReleaseSwapchainImage", release_image),
    F("xrStringToPath", string_to_path),
    F("xrPathToString", path_to_string),
    F("xrCreateActionSet", create_action_set),
    F("xrDestroyActionSet", destroy_action_set),
    F("xrCreateAction", create_action),
    F("xrDestroyAction", destroy_action),
    F("xrSuggestInteractionProfileBindings", suggest_bindings),
    F("xrAttachSessionActionSets", attach_action_sets),
    F("xrCreateActionSpace", create_action_space),
    F("xrSyncActions", sync_actions),
    F("xrGetActionStateBoolean", get_boolean),
    F("xrGetActionStatePose", get_pose),
    F("xrApplyHapticFeedback", apply_haptic),
    F("xrStopHapticFeedback", stop_haptic),
#undef F
};

/* Whether the instance is lost by the time `func` (a function of this file) is called:
 * the script's call, once its frames have gone by, loses it; any call after that is an
 * application's error, logged.  The lock is held. */
static bool lost_at(const char *func)
{
	if (instance_dead) {
		logf_("error %s called on a lost instance", func);
		return true;
	}
	if (script.instance_lost_after < 0.0 || (double)frames_waited_total < script.instance_lost_after)
		return false;
	for (size_t i = 0; i < sizeof FUNCTIONS / sizeof *FUNCTIONS; i++)
		if (FUNCTIONS[i].func && strcmp(FUNCTIONS[i].func, func) == 0 &&
		    strcmp(FUNCTIONS[i].name, script.instance_lost_call) == 0) {
			instance_dead = true;
			logf_("instance lost at %s after %lld frames", FUNCTIONS[i].name, (long long)frames_waited_total);
			return true;
		}
	return false;
}

static XrResult XRAPI_CALL get_instance_proc_addr(XrInstance instance, const char *name, PFN_xrVoidFunction *out)
{
	if (!name || !out)
		return XR_ERROR_VALIDATION_FAILURE;
	*out = NULL;
	if (instance != XR_NULL_HANDLE) {
		pthread_mutex_lock(&lock);
		object *o = lookup((uint64_t)instance, K_INSTANCE);
		pthread_mutex_unlock(&lock);
		if (!o)
			return XR_ERROR_HANDLE_INVALID;
	}
	for (size_t i = 0; i < sizeof FUNCTIONS / sizeof *FUNCTIONS; i++)
		if (strcmp(FUNCTIONS[i].name, name) == 0) {
			if (instance == XR_NULL_HANDLE && !FUNCTIONS[i].global)
				return XR_ERROR_HANDLE_INVALID;
			*out = FUNCTIONS[i].fn;
			return XR_SUCCESS;
		}
	return XR_ERROR_FUNCTION_UNSUPPORTED;
}

EXPORT XrResult XRAPI_CALL xrNegotiateLoaderRuntimeInterface(const XrNegotiateLoaderInfo *info,
                                                              XrNegotiateRuntimeRequest *request);
EXPORT XrResult XRAPI_CALL xrNegotiateLoaderRuntimeInterface(const XrNegotiateLoaderInfo *info,
                                                              XrNegotiateRuntimeRequest *request)
{
	if (!info || !request || info->structType != XR_LOADER_INTERFACE_STRUCT_LOADER_INFO || info->structVersion != 1 ||
	    info->structSize != sizeof *info || request->structType != XR_LOADER_INTERFACE_STRUCT_RUNTIME_REQUEST ||
	    request->structVersion != 1 || request->structSize != sizeof *request)
		return XR_ERROR_INITIALIZATION_FAILED;
	if (info->minInterfaceVersion > 1 || info->maxInterfaceVersion < 1 ||
	    XR_VERSION_MAJOR(info->maxApiVersion) < 1 || XR_VERSION_MAJOR(info->minApiVersion) > 1)
		return XR_ERROR_INITIALIZATION_FAILED;
	request->runtimeInterfaceVersion = 1;
	request->runtimeApiVersion = XR_CURRENT_API_VERSION;
	request->getInstanceProcAddr = get_instance_proc_addr;
	return XR_SUCCESS;
}
