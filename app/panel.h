/* The demo's parameter panel, heads-up line, live plots and debug overlays (Dear ImGui,
 * behind this C interface so that the rest of tela stays C).  The panel only shows and
 * edits a panel_model: the demo fills it every frame, hands it to panel_build, and turns
 * what the user changed into simulation commands itself (demo_apply_panel).  Nothing
 * here knows the simulation thread or the camera. */
#ifndef TELA_PANEL_H
#define TELA_PANEL_H

#include "events.h"
#include "render.h"
#include "sim_thread.h"

#include <SDL2/SDL.h>

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ring buffers of the live plots, fed by the demo from every new snapshot. */
enum { PANEL_PLOT_LENGTH = 600 };

typedef struct panel_plots {
	float energy[PANEL_PLOT_LENGTH];  /* kinetic + potential, J */
	float strain[PANEL_PLOT_LENGTH];  /* maximum strain */
	float step_us[PANEL_PLOT_LENGTH]; /* step time p50, microseconds */
	int count;                        /* entries filled, up to PANEL_PLOT_LENGTH */
	int next;                         /* where the next entry goes (the oldest once full) */
} panel_plots;

/* What the overlays draw, already projected to pixels (origin top-left). */
typedef struct panel_overlay {
	const float (*arrows)[4]; /* x0 y0 x1 y1 */
	int arrow_count;
	float arrow_width;        /* pixels */
	const float (*labels)[2]; /* where each id is written */
	const int *label_ids;
	int label_count;
	/* the seed's debug views as coloured segments: x0 y0 x1 y1, colour (a panel_color) */
	const float (*segments)[5];
	int segment_count;
	float clip[4]; /* the 3-D view (x y width height): nothing is drawn outside it */
} panel_overlay;

/* Colours of the debug segments. */
typedef enum panel_color {
	PANEL_COLOR_BROAD_PROXIMITY,
	PANEL_COLOR_PROXIMITY,
	PANEL_COLOR_BROAD_COLLISION,
	PANEL_COLOR_COLLISION,
	PANEL_COLOR_PREDICTED,
	PANEL_COLOR_FORCE, /* the coupling force on a grabbed vertex, drawn thicker */
	PANEL_COLOR_BOX, /* + depth, shading deeper levels; last, since depths add to it */
} panel_color;

/* The Files section's path fields hold this many bytes. */
enum { PANEL_PATH_SIZE = 1024 };

typedef enum panel_action { PANEL_NONE, PANEL_PLAY, PANEL_PAUSE, PANEL_STEP, PANEL_RESET, PANEL_QUIT } panel_action;

typedef struct panel_model {
	/* shown only */
	const st_layout *layout;
	const st_snapshot *snapshot;
	double render_fps;
	const panel_plots *plots;
	panel_overlay overlay;
	bool show_panel, show_hud;
	/* the tracked stylus's state line in the heads-up line (NULL: no device), in warning
	 * colours while its pointer is frozen */
	const char *device_line;
	bool device_frozen;
	/* the message line at the bottom of the view (NULL: none), faded as of now_ns; shown
	 * whether or not the panel and the heads-up line are */
	const ev_line *messages;
	int64_t now_ns;
	/* shown and edited in place; the panel sets the matching *_changed flag */
	int scene;           /* index into scn_builtin_info, -1 when a file was loaded */
	sim_world_def def;   /* integrator, substeps, gravity, wind, air damping, Provot */
	float dt;            /* the simulation step, s */
	int object;          /* the cloth object whose material is shown */
	sim_material material;
	/* the demo's own settings, edited in place with no flag */
	rd_style style;
	bool floor_grid;
	bool vertex_ids, velocity_arrows;
	float arrow_length;  /* s: an arrow spans length * v */
	float arrow_width;   /* pixels */
	/* the seed's debug views (the demo asks the simulation thread for their data) */
	bool debug_boxes, debug_broad, debug_narrow, debug_predicted;
	int depth_min, depth_max; /* hierarchy levels whose boxes are drawn, root 0 */
	int tree_depth;           /* shown: the deepest level there is, -1 none */
	/* what the user did in this frame */
	bool scene_changed, def_changed, dt_changed, object_changed, material_changed, debug_changed;
	bool gpu, gpu_changed; /* issue 7: the GPU integrator on (the snapshot says if it stepped) */
	panel_action action;
	/* Files (app/demo_files.c): the path fields, edited in place (PANEL_PATH_SIZE bytes
	 * each; NULL: no Files section), the recent scenes, newest first, and the last open
	 * or save's outcome; then what the user asked for in this frame */
	char *open_path, *save_path;
	const char *const *recent;
	int recent_count;
	const char *files_message;
	bool files_error;
	bool open_requested, save_requested;
	int open_recent; /* index into recent, -1 none */
} panel_model;

typedef struct panel panel;

/* Starts ImGui on the window's current GL context; NULL if its backends refuse. */
panel *panel_create(SDL_Window *window, SDL_GLContext context);
void panel_destroy(panel **p);

/* Gives ImGui the event and says whether it is ImGui's: a press or wheel over the panel,
 * the motion and release of a drag that began on the panel, and keys while a text field
 * or slider is active.  The demo ignores the events it claims. */
bool panel_handle_event(panel *p, const SDL_Event *event);

/* One frame: begin, build (which edits the model), then render after the scene is drawn
 * and before the buffers are swapped. */
void panel_begin_frame(panel *p);
void panel_build(panel *p, panel_model *model);
void panel_render(panel *p);

/* The width the panel takes from the right of a window `screen_width` pixels wide, its
 * margin included: the default view frames the scene in the rest. */
float panel_reserved_width(float screen_width);

/* Opens the "Display and debug views" section in the next build, as a click on its
 * header would (for scripted use: ImGui 1.86 reads the mouse from SDL's state, which
 * pushed events do not move). */
void panel_open_debug_views(panel *p);

/* The panel's vertical scrolling as last built: the offset, its maximum (0: the content
 * fits) and the content's height, pixels; false when it was hidden.  The panel is as tall
 * as the window and what does not fit scrolls inside it. */
bool panel_scroll(const panel *p, float scroll[3]);

/* The panel window's rectangle as last built (x, y, width, height in pixels); false when
 * it was hidden. */
bool panel_rect(const panel *p, float rect[4]);

/* Line i of the message line as last built, oldest first (NULL past the last). */
const char *panel_message(const panel *p, int i);

#ifdef __cplusplus
}
#endif

#endif
