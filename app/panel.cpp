// The demo's panel in Dear ImGui.  Only presentation lives here: the demo fills a
// panel_model, this file shows it and writes the user's edits back into it, and the demo
// turns those into simulation commands (app/demo.c).
extern "C" {
#include "scenes/scenes.h"
#include "sim_thread.h"
#include "render.h"
}
#include "panel.h"

#include <backends/imgui_impl_opengl3.h>
#include <backends/imgui_impl_sdl.h>
#include <imgui.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

struct panel {
	SDL_Window *window;
	float rect[4];      // the panel window as last built
	bool rect_valid;
	float scroll[3];    // scroll y, its maximum, the content's height, as last built
	bool open_debug_views; // panel_open_debug_views: open that section in the next build
	bool popup_open;    // a combo's list may reach beyond the panel window
	bool drag_owned;    // the current mouse press began on ImGui
	float mouse[2];     // wheel events carry no position
	char messages[EV_LINE_EVENTS][EV_TEXT + 64]; // the message line as last built
	int message_count;
};

panel *panel_create(SDL_Window *window, SDL_GLContext context)
{
	IMGUI_CHECKVERSION();
	if (!ImGui::CreateContext())
		return nullptr;
	ImGuiIO &io = ImGui::GetIO();
	// no imgui.ini or log file dropped into whatever folder the demo was started from
	io.IniFilename = nullptr;
	io.LogFilename = nullptr;
	ImGui::StyleColorsDark();
	ImGui::GetStyle().WindowRounding = 4.0f;
	// drop-down lists opaque: a translucent list over the cloth is hard to read
	ImGui::GetStyle().Colors[ImGuiCol_PopupBg].w = 1.0f;
	if (!ImGui_ImplSDL2_InitForOpenGL(window, context)) {
		ImGui::DestroyContext();
		return nullptr;
	}
	// 430 core: the demo's own context version, which llvmpipe and every GL 4.3 driver take
	if (!ImGui_ImplOpenGL3_Init("#version 430 core")) {
		ImGui_ImplSDL2_Shutdown();
		ImGui::DestroyContext();
		return nullptr;
	}
	panel *p = new panel{};
	p->window = window;
	p->mouse[0] = p->mouse[1] = -1.0f;
	return p;
}

void panel_destroy(panel **pp)
{
	if (!pp || !*pp)
		return;
	ImGui_ImplOpenGL3_Shutdown();
	ImGui_ImplSDL2_Shutdown();
	ImGui::DestroyContext();
	delete *pp;
	*pp = nullptr;
}

static bool over_panel(const panel *p, float x, float y)
{
	if (p->popup_open)
		return true; // a click anywhere closes the popup, and is the popup's
	return p->rect_valid && x >= p->rect[0] && y >= p->rect[1] && x < p->rect[0] + p->rect[2] &&
	       y < p->rect[1] + p->rect[3];
}

bool panel_handle_event(panel *p, const SDL_Event *e)
{
	ImGui_ImplSDL2_ProcessEvent(e);
	// Decided from our own record of where the panel is rather than io.WantCaptureMouse:
	// that one describes the mouse as of the last frame, and a press can arrive in the
	// same batch of events as the motion that brought the cursor over the panel.
	switch (e->type) {
	case SDL_MOUSEMOTION:
		p->mouse[0] = (float)e->motion.x, p->mouse[1] = (float)e->motion.y;
		return p->drag_owned;
	case SDL_MOUSEBUTTONDOWN:
		p->mouse[0] = (float)e->button.x, p->mouse[1] = (float)e->button.y;
		if (over_panel(p, p->mouse[0], p->mouse[1]))
			p->drag_owned = true;
		return p->drag_owned;
	case SDL_MOUSEBUTTONUP: {
		bool owned = p->drag_owned;
		p->drag_owned = false;
		return owned;
	}
	case SDL_MOUSEWHEEL: return over_panel(p, p->mouse[0], p->mouse[1]);
	case SDL_KEYDOWN:
	case SDL_KEYUP: return ImGui::GetIO().WantCaptureKeyboard;
	case SDL_TEXTINPUT: return ImGui::GetIO().WantTextInput;
	default: return false;
	}
}

void panel_begin_frame(panel *p)
{
	ImGui_ImplOpenGL3_NewFrame();
	ImGui_ImplSDL2_NewFrame();
	ImGui::NewFrame();
}

void panel_render(panel *p)
{
	ImGui::Render();
	ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

bool panel_rect(const panel *p, float rect[4])
{
	for (int k = 0; k < 4; k++)
		rect[k] = p->rect_valid ? p->rect[k] : 0.0f;
	return p->rect_valid;
}

float panel_reserved_width(float screen_width) { return std::fmin(340.0f, 0.42f * screen_width) + 16.0f; }

void panel_open_debug_views(panel *p) { p->open_debug_views = true; }

bool panel_scroll(const panel *p, float scroll[3])
{
	for (int k = 0; k < 3; k++)
		scroll[k] = p->rect_valid ? p->scroll[k] : 0.0f;
	return p->rect_valid;
}

// ---- pieces ---------------------------------------------------------------------------------

static float length3(const float v[3]) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

static void overlays(const panel_overlay &o)
{
	// the background list: over the cloth, under the panel and the heads-up line
	ImDrawList *dl = ImGui::GetBackgroundDrawList();
	if (!(o.clip[2] > 0.0f && o.clip[3] > 0.0f))
		return; // no 3-D view left to draw into
	dl->PushClipRect(ImVec2(o.clip[0], o.clip[1]), ImVec2(o.clip[0] + o.clip[2], o.clip[1] + o.clip[3]), true);
	const ImU32 arrow = IM_COL32(255, 200, 60, 230), text = IM_COL32(230, 240, 255, 255);
	const ImU32 backdrop = IM_COL32(20, 22, 28, 190);
	float head = 3.0f * o.arrow_width + 2.0f;
	for (int i = 0; i < o.arrow_count; i++) {
		const float *a = o.arrows[i];
		float dx = a[2] - a[0], dy = a[3] - a[1], l = std::sqrt(dx * dx + dy * dy);
		if (l < 0.5f)
			continue;
		dl->AddLine(ImVec2(a[0], a[1]), ImVec2(a[2], a[3]), arrow, o.arrow_width);
		if (l > 2.0f * head) {
			float ux = dx / l, uy = dy / l, bx = a[2] - head * ux, by = a[3] - head * uy;
			dl->AddTriangleFilled(ImVec2(a[2], a[3]), ImVec2(bx - 0.5f * head * uy, by + 0.5f * head * ux),
			                      ImVec2(bx + 0.5f * head * uy, by - 0.5f * head * ux), arrow);
		}
	}
	static const ImU32 segment_colors[] = {
	    IM_COL32(90, 140, 255, 110), // broad proximity
	    IM_COL32(80, 235, 120, 255), // proximity (narrow)
	    IM_COL32(255, 170, 60, 110), // broad collision
	    IM_COL32(255, 60, 60, 255),  // collision
	    IM_COL32(230, 90, 255, 200), // predicted
	    IM_COL32(255, 80, 200, 255), // grab force
	};
	for (int i = 0; i < o.segment_count; i++) {
		const float *g = o.segments[i];
		int c = (int)g[4];
		ImU32 color;
		if (c < PANEL_COLOR_BOX) {
			color = segment_colors[c];
		} else {
			/* boxes: lighter with depth, so nested levels stay apart */
			int depth = c - PANEL_COLOR_BOX, shade = 120 + (depth * 23) % 136;
			color = IM_COL32(shade, 255 - shade / 2, 255, 170);
		}
		// a force is one line among the debug views' thousands: it must stand out
		dl->AddLine(ImVec2(g[0], g[1]), ImVec2(g[2], g[3]), color, c == PANEL_COLOR_FORCE ? 3.0f : 1.0f);
	}
	char id[16];
	for (int i = 0; i < o.label_count; i++) {
		std::snprintf(id, sizeof id, "%d", o.label_ids[i]);
		// on a dark backdrop: light text alone is lost on a light cloth
		ImVec2 at(o.labels[i][0] + 3.0f, o.labels[i][1] - 13.0f), size = ImGui::CalcTextSize(id);
		dl->AddRectFilled(ImVec2(at.x - 1.0f, at.y), ImVec2(at.x + size.x + 1.0f, at.y + size.y), backdrop, 2.0f);
		dl->AddText(at, text, id);
	}
	dl->PopClipRect();
}

static void hud(const panel_model &m)
{
	const st_snapshot *s = m.snapshot;
	ImGui::SetNextWindowPos(ImVec2(8.0f, 8.0f), ImGuiCond_Always);
	ImGui::SetNextWindowBgAlpha(0.45f);
	const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoInputs |
	                               ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
	                               ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav;
	if (ImGui::Begin("##hud", nullptr, flags)) {
		char render[32] = "";
		if (m.render_fps > 0.0) // nothing measured yet (or a headless picture)
			std::snprintf(render, sizeof render, "   render %.0f fps", m.render_fps);
		if (s->target_hz > 0.0)
			ImGui::Text("sim %.0f / %.0f Hz%s", s->achieved_hz, s->target_hz, render);
		else
			ImGui::Text("sim %.0f Hz (unpaced)%s", s->achieved_hz, render);
		ImGui::Text("step p50 %.0f us  p99 %.0f us   %s", s->step_p50_us, s->step_p99_us,
		            sim_integrator_name(s->def.integrator));
		ImGui::Text("%d vertices   contacts %d   collisions %d", s->vertex_count, s->stats.contacts,
		            s->stats.collisions);
		if (s->grabbed_vertex >= 0)
			ImGui::Text("grab: vertex %d   %.2f N", s->grabbed_vertex, (double)length3(s->grab_force));
		if (m.device_line) {
			if (m.device_frozen)
				ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.3f, 1.0f), "stylus: %s", m.device_line);
			else
				ImGui::Text("stylus: %s", m.device_line);
		}
		if (s->slow_motion)
			ImGui::TextColored(ImVec4(1.0f, 0.35f, 0.3f, 1.0f), "SLOW MOTION");
		if (s->paused)
			ImGui::TextColored(ImVec4(1.0f, 0.85f, 0.4f, 1.0f), "paused");
	}
	ImGui::End();
}

static void plot(const char *label, const float *values, const panel_plots &p, const char *fmt)
{
	char now[48] = "";
	int last = (p.next + PANEL_PLOT_LENGTH - 1) % PANEL_PLOT_LENGTH;
	if (p.count > 0)
		std::snprintf(now, sizeof now, fmt, (double)values[last]);
	// a full ring starts at `next`; a filling one at 0
	int offset = p.count == PANEL_PLOT_LENGTH ? p.next : 0;
	ImGui::PlotLines(label, values, p.count, offset, now, FLT_MAX, FLT_MAX, ImVec2(0.0f, 50.0f));
}

static bool log_slider(const char *label, float *v, float lo, float hi, const char *fmt)
{
	return ImGui::SliderFloat(label, v, lo, hi, fmt, ImGuiSliderFlags_Logarithmic);
}

// A spring's stiffness and damping side by side: one row per kind keeps the panel short.
static bool spring_row(const char *label, float *stiffness, float *damping)
{
	float half = 0.5f * (ImGui::CalcItemWidth() - ImGui::GetStyle().ItemInnerSpacing.x);
	ImGui::PushID(label);
	ImGui::SetNextItemWidth(half);
	bool changed = log_slider("##k", stiffness, 0.01f, 1e5f, "%.4g");
	ImGui::SameLine(0.0f, ImGui::GetStyle().ItemInnerSpacing.x);
	ImGui::SetNextItemWidth(half);
	changed |= log_slider(label, damping, 0.0f, 100.0f, "%.4g");
	ImGui::PopID();
	return changed;
}

static void run_section(panel_model &m)
{
	const st_snapshot *s = m.snapshot;
	if (ImGui::Button(s->paused ? "Play" : "Pause"))
		m.action = s->paused ? PANEL_PLAY : PANEL_PAUSE;
	ImGui::SameLine();
	if (ImGui::Button("Step"))
		m.action = PANEL_STEP;
	ImGui::SameLine();
	if (ImGui::Button("Reset"))
		m.action = PANEL_RESET;
	ImGui::SameLine();
	if (ImGui::Button("Quit"))
		m.action = PANEL_QUIT;

	const scn_info *current = m.scene >= 0 ? scn_builtin_info(m.scene) : nullptr;
	if (ImGui::BeginCombo("scene", current ? current->name : m.layout->scene)) {
		for (int i = 0; i < scn_builtin_count(); i++) {
			const scn_info *info = scn_builtin_info(i);
			if (ImGui::Selectable(info->name, i == m.scene) && i != m.scene) {
				m.scene = i;
				m.scene_changed = true;
			}
			if (ImGui::IsItemHovered())
				ImGui::SetTooltip("%s", info->description);
		}
		ImGui::EndCombo();
	}
	/* in milliseconds, the unit people think of steps in; applied when the edit ends so
	 * that typing "0.5" does not pass through "0" */
	float ms = 1e3f * m.dt;
	if (ImGui::InputFloat("dt (ms)", &ms, 0.1f, 1.0f, "%.3f") && ms >= 0.001f && ms <= 100.0f)
		m.dt = 1e-3f * ms;
	m.dt_changed |= ImGui::IsItemDeactivatedAfterEdit();
	ImGui::Text("t = %.2f s (scene dt %.3g ms)", s->time, 1e3 * (double)m.layout->dt);
}

static void integrator_section(panel_model &m)
{
	int integrator = (int)m.def.integrator;
	if (ImGui::BeginCombo("integrator", sim_integrator_name(m.def.integrator))) {
		for (int i = 0; i < SIM_INTEGRATOR_COUNT; i++)
			if (ImGui::Selectable(sim_integrator_name((sim_integrator)i), i == integrator) && i != integrator) {
				m.def.integrator = (sim_integrator)i;
				m.def_changed = true;
			}
		ImGui::EndCombo();
	}
	m.def_changed |= ImGui::SliderInt("substeps", &m.def.substeps, 1, 32);
	/* issue 7: the integrator on the GPU (docs/gpu.md); collisions stay on the CPU */
	m.gpu_changed |= ImGui::Checkbox("GPU integrator", &m.gpu);
	if (m.gpu) {
		ImGui::SameLine();
		if (m.snapshot->stepper_on)
			ImGui::TextUnformatted("(stepping on the GPU)");
		else
			ImGui::TextDisabled("(the CPU steps: see the message line)");
	}
}

static void material_section(panel_model &m)
{
	if (m.layout->object_count == 0) {
		ImGui::TextDisabled("no cloth in this scene");
		return;
	}
	if (m.layout->object_count > 1 && ImGui::BeginCombo("object", m.layout->objects[m.object].name)) {
		for (int i = 0; i < m.layout->object_count; i++)
			if (ImGui::Selectable(m.layout->objects[i].name, i == m.object) && i != m.object) {
				m.object = i;
				m.object_changed = true;
			}
		ImGui::EndCombo();
	}
	if (m.object_changed)
		return; // the demo fills in that object's material next frame
	sim_material &mat = m.material;
	static const char *const kinds[SIM_SPRING_KIND_COUNT] = {"structural", "shear", "bend"};
	bool changed = false;
	ImGui::TextDisabled("stiffness N/m, damping N s/m");
	for (int k = 0; k < SIM_SPRING_KIND_COUNT; k++)
		changed |= spring_row(kinds[k], &mat.stiffness[k], &mat.damping[k]);
	if (mat.anchor_stiffness > 0.0f)
		changed |= spring_row("anchors", &mat.anchor_stiffness, &mat.anchor_damping);
	if (mat.total_mass > 0.0f)
		changed |= log_slider("mass", &mat.total_mass, 1e-4f, 100.0f, "%.4g kg");
	else
		changed |= log_slider("density", &mat.areal_density, 1e-3f, 10.0f, "%.4g kg/m2");
	changed |= ImGui::SliderFloat("thickness", &mat.thickness, 0.0f, 0.05f, "%.4f m");
	changed |= ImGui::SliderFloat("friction", &mat.friction, 0.0f, 2.0f, "%.2f");
	m.material_changed = changed;
}

static void world_section(panel_model &m)
{
	sim_world_def &d = m.def;
	bool changed = false;
	changed |= ImGui::SliderFloat3("gravity", d.gravity, -20.0f, 20.0f, "%.2f");
	changed |= ImGui::SliderFloat3("wind", d.wind, -20.0f, 20.0f, "%.1f");
	changed |= ImGui::SliderFloat("air damping", &d.air_damping, 0.0f, 10.0f, "%.3f /s", ImGuiSliderFlags_Logarithmic);
	changed |= ImGui::Checkbox("Provot strain limit", &d.strain_limit);
	ImGui::BeginDisabled(!d.strain_limit);
	changed |= log_slider("tau", &d.strain_tau, 0.001f, 1.0f, "%.3f");
	ImGui::EndDisabled();
	m.def_changed |= changed;
}

static void display_section(panel_model &m)
{
	static const char *const styles[RD_STYLE_COUNT] = {"solid", "wireframe", "wireframe over solid"};
	int style = (int)m.style;
	if (ImGui::Combo("style", &style, styles, RD_STYLE_COUNT))
		m.style = (rd_style)style;
	ImGui::Checkbox("floor grid", &m.floor_grid);
	ImGui::SameLine();
	ImGui::Checkbox("heads-up line", &m.show_hud);
	ImGui::Checkbox("vertex ids", &m.vertex_ids);
	ImGui::Checkbox("velocity arrows", &m.velocity_arrows);
	ImGui::BeginDisabled(!m.velocity_arrows);
	log_slider("length", &m.arrow_length, 1e-3f, 10.0f, "%.3f s");
	ImGui::SliderFloat("width", &m.arrow_width, 0.5f, 6.0f, "%.1f px");
	ImGui::EndDisabled();
	m.debug_changed |= ImGui::Checkbox("bounding boxes", &m.debug_boxes);
	if (m.debug_boxes) {
		int top = m.tree_depth > 0 ? m.tree_depth : 0;
		m.debug_changed |= ImGui::DragIntRange2("depths", &m.depth_min, &m.depth_max, 0.1f, 0, top, "from %d",
		                                        "to %d");
	}
	m.debug_changed |= ImGui::Checkbox("broad-phase pairs", &m.debug_broad);
	if (ImGui::IsItemHovered())
		ImGui::SetTooltip("candidates from the hierarchy: blue for proximity, orange for collision");
	m.debug_changed |= ImGui::Checkbox("proximities and collisions", &m.debug_narrow);
	if (ImGui::IsItemHovered())
		ImGui::SetTooltip("pairs that got an impulse: green repulsion, red collision");
	m.debug_changed |= ImGui::Checkbox("state before collision handling", &m.debug_predicted);
}

static const char *base_name(const char *path)
{
	const char *slash = std::strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

// Open (a path typed or a recent scene) and save: the demo does the work after the frame.
static void files_section(panel_model &m)
{
	bool open = ImGui::CollapsingHeader("Files", ImGuiTreeNodeFlags_DefaultOpen);
	if (m.files_message && m.files_message[0]) {
		// shown collapsed too: a dropped file's error must not hide
		if (m.files_error)
			ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
		ImGui::TextWrapped("%s", m.files_message);
		if (m.files_error)
			ImGui::PopStyleColor();
	}
	if (!open)
		return;
	const ImGuiInputTextFlags enter = ImGuiInputTextFlags_EnterReturnsTrue;
	float button = ImGui::CalcTextSize("Save scene...").x + 2.0f * ImGui::GetStyle().FramePadding.x;
	ImGui::SetNextItemWidth(-button - ImGui::GetStyle().ItemSpacing.x);
	m.open_requested |= ImGui::InputTextWithHint("##open", "scene.ini or seed folder", m.open_path, PANEL_PATH_SIZE, enter);
	ImGui::SameLine();
	m.open_requested |= ImGui::Button("Open", ImVec2(button, 0.0f));
	if (ImGui::IsItemHovered())
		ImGui::SetTooltip("or drop a scene file or seed folder on the window");
	ImGui::SetNextItemWidth(-button - ImGui::GetStyle().ItemSpacing.x);
	m.save_requested |= ImGui::InputTextWithHint("##save", "my-scene.ini", m.save_path, PANEL_PATH_SIZE, enter);
	ImGui::SameLine();
	m.save_requested |= ImGui::Button("Save scene...", ImVec2(button, 0.0f));
	if (ImGui::IsItemHovered())
		ImGui::SetTooltip("the scene with these settings, as a scene file that runs the same");
	// one row however long the list: the panel is short of room
	ImGui::BeginDisabled(m.recent_count == 0);
	ImGui::SetNextItemWidth(-button - ImGui::GetStyle().ItemSpacing.x);
	if (ImGui::BeginCombo("recent", m.recent_count > 0 ? base_name(m.recent[0]) : "(none yet)")) {
		for (int i = 0; i < m.recent_count; i++) {
			ImGui::PushID(i);
			if (ImGui::Selectable(base_name(m.recent[i])))
				m.open_recent = i;
			if (ImGui::IsItemHovered())
				ImGui::SetTooltip("%s", m.recent[i]);
			ImGui::PopID();
		}
		ImGui::EndCombo();
	}
	ImGui::EndDisabled();
}

// At the bottom of the 3-D view, left of the panel, so that it covers neither the panel
// nor the heads-up line; newest last, each fading out as it expires.
static void message_line(panel *p, const panel_model &m, float panel_width)
{
	p->message_count = 0;
	const ev_line *line = m.messages;
	if (!line || line->count == 0)
		return;
	ImVec2 screen = ImGui::GetIO().DisplaySize;
	float width = screen.x - panel_width - 24.0f;
	if (width < 120.0f)
		width = 120.0f;
	ImGui::SetNextWindowPos(ImVec2(8.0f, screen.y - 8.0f), ImGuiCond_Always, ImVec2(0.0f, 1.0f));
	ImGui::SetNextWindowSizeConstraints(ImVec2(0.0f, 0.0f), ImVec2(width, screen.y * 0.5f));
	ImGui::SetNextWindowBgAlpha(0.55f);
	const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoInputs |
	                               ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
	                               ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav;
	if (ImGui::Begin("##messages", nullptr, flags)) {
		ImGui::PushTextWrapPos(width - 16.0f);
		for (int i = 0; i < line->count; i++) {
			const ev_event &e = line->events[i];
			char *text = p->messages[p->message_count++];
			ev_format(&e, text, (int)sizeof p->messages[0]);
			float a = ev_line_alpha(line, i, m.now_ns);
			ImVec4 color = e.level == EV_ERROR     ? ImVec4(1.0f, 0.45f, 0.4f, a)
			               : e.level == EV_WARNING ? ImVec4(1.0f, 0.75f, 0.35f, a)
			                                       : ImVec4(0.9f, 0.93f, 1.0f, a);
			ImGui::PushStyleColor(ImGuiCol_Text, color);
			ImGui::TextUnformatted(text);
			ImGui::PopStyleColor();
		}
		ImGui::PopTextWrapPos();
	}
	ImGui::End();
}

static void plots_section(const panel_model &m)
{
	const panel_plots &p = *m.plots;
	plot("energy", p.energy, p, "%.4g J");
	plot("max strain", p.strain, p, "%.4f");
	plot("step p50", p.step_us, p, "%.0f us");
}

void panel_build(panel *p, panel_model *model)
{
	panel_model &m = *model;
	m.scene_changed = m.def_changed = m.object_changed = m.material_changed = false;
	m.gpu_changed = false;
	m.action = PANEL_NONE;
	overlays(m.overlay);
	if (m.show_hud)
		hud(m);
	p->rect_valid = false;
	if (m.show_panel) {
		// on the right, so that the cloth (framed beside it by the start view) stays clickable
		ImVec2 screen = ImGui::GetIO().DisplaySize;
		float width = panel_reserved_width(screen.x) - 16.0f;
		ImGui::SetNextWindowPos(ImVec2(screen.x - width - 8.0f, 8.0f), ImGuiCond_Always);
		// the window's height is the screen's: what does not fit scrolls inside it
		ImGui::SetNextWindowSize(ImVec2(width, screen.y - 16.0f), ImGuiCond_Always);
		// opaque, so that neither the cloth nor the pointer shows through the controls
		ImGui::SetNextWindowBgAlpha(1.0f);
		const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
		                               ImGuiWindowFlags_NoSavedSettings;
		if (ImGui::Begin("tela  (H hides)", nullptr, flags)) {
			ImGui::PushItemWidth(-90.0f);
			if (ImGui::CollapsingHeader("Run", ImGuiTreeNodeFlags_DefaultOpen))
				run_section(m);
			if (m.open_path && m.save_path)
				files_section(m);
			if (ImGui::CollapsingHeader("Integrator", ImGuiTreeNodeFlags_DefaultOpen))
				integrator_section(m);
			if (ImGui::CollapsingHeader("Material", ImGuiTreeNodeFlags_DefaultOpen))
				material_section(m);
			if (ImGui::CollapsingHeader("World", ImGuiTreeNodeFlags_DefaultOpen))
				world_section(m);
			if (ImGui::CollapsingHeader("Plots", ImGuiTreeNodeFlags_DefaultOpen))
				plots_section(m);
			if (p->open_debug_views)
				ImGui::SetNextItemOpen(true);
			p->open_debug_views = false;
			if (ImGui::CollapsingHeader("Display and debug views"))
				display_section(m);
			ImGui::PopItemWidth();
			p->scroll[0] = ImGui::GetScrollY(), p->scroll[1] = ImGui::GetScrollMaxY();
			p->scroll[2] = ImGui::GetCursorPosY();
		}
		ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
		p->rect[0] = pos.x, p->rect[1] = pos.y, p->rect[2] = size.x, p->rect[3] = size.y;
		p->rect_valid = true;
		ImGui::End();
	}
	message_line(p, m, p->rect_valid ? p->rect[2] + 8.0f : 0.0f);
	p->popup_open = ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId);
}

const char *panel_message(const panel *p, int i)
{
	return p && i >= 0 && i < p->message_count ? p->messages[i] : nullptr;
}
