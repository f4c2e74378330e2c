// The HTML report's inline SVG charts of turn labels (no script needed): per group, the labels of
// each turn index as stacked bars and the label transitions turn n -> n+1 as a heatmap, in one
// colour per label (the legend's too). Every label name in them goes through html_escape.
#pragma once

#include <string>

#include "report/metrics.h"

namespace ptxbench::report {

/// The colour of a label in the bars and the legend ("#2ca02c" for Correct, ...).
const char* label_color(TurnLabel l);
/// <svg class="label-bars">: per turn index, a bar stacked by label, each part titled with its count.
std::string label_bars_svg(const LabelCounts& c);
/// <svg class="transition-heatmap">: rows the label at turn n, columns the label at turn n+1.
std::string transition_svg(const Transitions& tr);

}  // namespace ptxbench::report
