// composition.html of a dataset folder (dataset_builder.h): the manifest's shares drawn as
// self-contained SVG charts.
#pragma once

#include <string>

#include "common/json_check.h"

namespace ptxbench {

/// composition.html from a manifest: pies of the shares per definition and label, bars per turn
/// and prompt tag, with tables of counts. Self-contained: no script, no external resource, a CSP
/// that forbids fetching any.
std::string render_composition_html(const ordered_json& manifest);

}  // namespace ptxbench
