/* The xr tests' two instruments, checked on their own (tests/xr.cmake): the test runtime
 * answers wrong arguments with the results the OpenXR specification gives, and Debian's
 * core validation layer, set up as the tela tests set it up (text into a file), does
 * write a report when a call is invalid, so that its silence in those tests means
 * something.  Needs XR_RUNTIME_JSON pointing at the test runtime's manifest. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"

#include <openxr/openxr.h>

#include <stdbool.h>
#include <unistd.h>

static XrInstance create(void)
{
	XrInstanceCreateInfo info = {.type = XR_TYPE_INSTANCE_CREATE_INFO};
	snprintf(info.applicationInfo.applicationName, sizeof info.applicationInfo.applicationName, "test_xr_validation");
	info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
	XrInstance instance = XR_NULL_HANDLE;
	XrResult r = xrCreateInstance(&info, &instance);
	CHECK_MSG(r == XR_SUCCESS, "xrCreateInstance: %d", (int)r);
	return r == XR_SUCCESS ? instance : XR_NULL_HANDLE;
}

static void test_runtime_results(void)
{
	unsetenv("XR_ENABLE_API_LAYERS");
	XrInstance instance = create();
	REQUIRE(instance != XR_NULL_HANDLE);
	XrInstanceProperties ip = {.type = XR_TYPE_INSTANCE_PROPERTIES};
	CHECK(xrGetInstanceProperties(instance, &ip) == XR_SUCCESS);
	CHECK(strcmp(ip.runtimeName, "tela test runtime") == 0);
	XrSystemId system = XR_NULL_SYSTEM_ID;
	XrSystemGetInfo get = {.type = XR_TYPE_SYSTEM_GET_INFO, .formFactor = XR_FORM_FACTOR_HANDHELD_DISPLAY};
	CHECK(xrGetSystem(instance, &get, &system) == XR_ERROR_FORM_FACTOR_UNSUPPORTED);
	get.formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY;
	CHECK(xrGetSystem(instance, &get, &system) == XR_SUCCESS);
	XrSystemProperties sp = {.type = XR_TYPE_SYSTEM_PROPERTIES};
	CHECK(xrGetSystemProperties(instance, system + 1, &sp) == XR_ERROR_SYSTEM_INVALID);
	XrPath path;
	CHECK(xrStringToPath(instance, "/user//hand", &path) == XR_ERROR_PATH_FORMAT_INVALID);
	CHECK(xrStringToPath(instance, "/user/Hand", &path) == XR_ERROR_PATH_FORMAT_INVALID);
	CHECK(xrStringToPath(instance, "/user/hand/left", &path) == XR_SUCCESS);
	char text[XR_MAX_PATH_LENGTH];
	uint32_t n = 0;
	CHECK(xrPathToString(instance, path, sizeof text, &n, text) == XR_SUCCESS && strcmp(text, "/user/hand/left") == 0);
	CHECK(xrPathToString(instance, path, 3, &n, text) == XR_ERROR_SIZE_INSUFFICIENT && n == 16);
	CHECK(xrPathToString(instance, path + 1000, sizeof text, &n, text) == XR_ERROR_PATH_INVALID);
	/* a session needs the GL binding of the extension it was asked for */
	XrSessionCreateInfo si = {.type = XR_TYPE_SESSION_CREATE_INFO, .systemId = system};
	XrSession session;
	CHECK(xrCreateSession(instance, &si, &session) == XR_ERROR_GRAPHICS_DEVICE_INVALID);
	/* an action set with no name */
	XrActionSetCreateInfo set = {.type = XR_TYPE_ACTION_SET_CREATE_INFO};
	snprintf(set.localizedActionSetName, sizeof set.localizedActionSetName, "Set");
	XrActionSet actions;
	CHECK(xrCreateActionSet(instance, &set, &actions) == XR_ERROR_NAME_INVALID);
	/* a profile this headset does not have */
	snprintf(set.actionSetName, sizeof set.actionSetName, "set");
	REQUIRE(xrCreateActionSet(instance, &set, &actions) == XR_SUCCESS);
	XrActionCreateInfo ai = {.type = XR_TYPE_ACTION_CREATE_INFO, .actionType = XR_ACTION_TYPE_BOOLEAN_INPUT};
	snprintf(ai.actionName, sizeof ai.actionName, "press");
	snprintf(ai.localizedActionName, sizeof ai.localizedActionName, "Press");
	XrAction action;
	REQUIRE(xrCreateAction(actions, &ai, &action) == XR_SUCCESS);
	XrPath profile, binding;
	CHECK(xrStringToPath(instance, "/interaction_profiles/valve/index_controller", &profile) == XR_SUCCESS);
	CHECK(xrStringToPath(instance, "/user/hand/left/input/trigger/click", &binding) == XR_SUCCESS);
	XrActionSuggestedBinding b = {action, binding};
	XrInteractionProfileSuggestedBinding s = {.type = XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING,
	                                          .interactionProfile = profile,
	                                          .countSuggestedBindings = 1,
	                                          .suggestedBindings = &b};
	CHECK(xrSuggestInteractionProfileBindings(instance, &s) == XR_ERROR_PATH_UNSUPPORTED);
	CHECK(xrStringToPath(instance, "/interaction_profiles/khr/simple_controller", &profile) == XR_SUCCESS);
	s.interactionProfile = profile;
	CHECK(xrSuggestInteractionProfileBindings(instance, &s) == XR_ERROR_PATH_UNSUPPORTED); /* no trigger there */
	CHECK(xrStringToPath(instance, "/user/hand/left/input/select/click", &binding) == XR_SUCCESS);
	b.binding = binding;
	CHECK(xrSuggestInteractionProfileBindings(instance, &s) == XR_SUCCESS);
	CHECK(xrDestroyActionSet(actions) == XR_SUCCESS);
	CHECK(xrDestroyInstance(instance) == XR_SUCCESS);
}

static void test_validation_layer_reports(void)
{
	char report[1024];
	snprintf(report, sizeof report, "%s/test_xr_validation.%ld.txt", test_tmpdir(), (long)getpid());
	remove(report);
	setenv("XR_ENABLE_API_LAYERS", "XR_APILAYER_LUNARG_core_validation", 1);
	setenv("XR_CORE_VALIDATION_EXPORT_TYPE", "text", 1);
	setenv("XR_CORE_VALIDATION_FILE_NAME", report, 1);
	XrInstance instance = create();
	REQUIRE(instance != XR_NULL_HANDLE);
	/* a structure of the wrong type */
	XrSystemGetInfo get = {.type = XR_TYPE_SYSTEM_PROPERTIES, .formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY};
	XrSystemId system;
	CHECK(xrGetSystem(instance, &get, &system) == XR_ERROR_VALIDATION_FAILURE);
	xrDestroyInstance(instance);
	FILE *f = fopen(report, "r");
	REQUIRE_MSG(f != NULL, "the layer wrote no report to %s", report);
	char line[1024];
	bool found = false;
	while (fgets(line, sizeof line, f))
		found = found || (strstr(line, "VALID_ERROR") && strstr(line, "VUID-XrSystemGetInfo-type-type"));
	fclose(f);
	remove(report);
	CHECK_MSG(found, "no VUID-XrSystemGetInfo-type-type error in the layer's report");
}

static const test_case tests[] = {TEST(test_runtime_results), TEST(test_validation_layer_reports)};
TEST_MAIN(tests)
