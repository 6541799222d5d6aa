// The EBmRNN paper's figures of one sample (Chakraborty et al. 2020), drawn for `memgrad inspect
// --html` from the trace of a model with an explicit memory (models/clinical/ebmrnn.cpp records
// "slot_hour", "evicted" and "read_gate" every step):
//  - Fig. 2, "explicit memory slot utilization": which event each explicit slot holds over time.
//    The paper's caption says each slot is annotated with the time index of the event it stores;
//    its text gives no axes, so the layout is the planning notes' (steps across, slots down).
//    Each cell prints the step of the stored event, shaded by that step; an eviction is outlined
//    in red with the evicted event's step; hovering a cell lists the variables the stored event
//    observed (the task's step_observations).
//  - the stored events' variables: a variable x step panel of what the sample observed, with the
//    events still held at the last step marked, and the list of those events by slot.
//  - Fig. 3, "influence of explicit memory": the read gate g_t of every hop over time (1 reads
//    the explicit memory only, 0 the blurred one).
#pragma once
#include <string>
#include <vector>

#include "tasks/task.hpp"
#include "tools/trace_view.hpp"

namespace memgrad::cli {

// The figures as an HTML fragment (inline SVG), "" when the series have no "slot_hour". An Error
// names a slot_hour, evicted or read_gate series of the wrong shape.
std::string render_memory_figures(const std::vector<TraceSeries>& series,
                                  const Task::StepObservations& observed);

// Fig. 2 (figure 2) or Fig. 3 (figure 3) alone, as a standalone SVG document (`memgrad figure
// ebmrnn-fig2`); an Error when the series lack what the figure draws.
std::string ebmrnn_figure_svg(int figure, const std::vector<TraceSeries>& series,
                              const Task::StepObservations& observed);

}  // namespace memgrad::cli
