// Repair notes appended to the feedback a model sees after a failed turn: the notes alone (mode
// notes), or the notes and the fastest of the fixed kernels they came from (mode notes+kernel).
// The run config's switch picks the mode; off leaves the feedback as it was (issue 19 item 5).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "notes/notes_store.h"

namespace ptxbench {

enum class NotesMode { off, notes, notes_and_kernel };

/// "off", "notes", "notes+kernel" (the names in run configs and reports).
std::string to_string(NotesMode mode);
/// The mode named `text`; InputError naming the three names otherwise.
NotesMode parse_notes_mode(std::string_view text);

/// Cap on the text appended after the feedback (bytes), the kernel included.
inline constexpr std::size_t kNotesAppendixMaxChars = 40000;
/// Cap on the notes part (heading included): notes are added whole, in rank order, while they fit;
/// the first one that does not fit ends the list (never a cut note).
inline constexpr std::size_t kNotesSectionMaxChars = 12000;
/// Notes retrieved per failed turn by feedback_with_notes unless told otherwise.
inline constexpr int kDefaultNotesK = 3;

/// The feedback with the notes appended (after a blank line): "## Repair notes", a line on what
/// they are, then per note "### Note i (from a kernel that got STATUS)" with "What was wrong:",
/// "Rule:", "Fix:", the instruction part's lines when the note has one ("Instruction:", "Shape
/// context:", "Operand contract:", "Required sequence:" with the steps joined by " → ",
/// "Diagnostics:", one "Do not:" line per item; empty fields have no line) and "Example:" (a code
/// block). A note without the part is shown as before it existed. In notes_and_kernel mode, with a kernel, then
/// "## Fastest fixed kernel", a line on what it is and the source in a ```cuda block, its start
/// kept and a cut marker added when the appended text would pass kNotesAppendixMaxChars.
/// Unchanged feedback when mode is off or there are no notes; in notes mode the kernel is ignored.
std::string append_notes(const std::string& feedback, const std::vector<ScoredNote>& notes, NotesMode mode,
                         const std::optional<std::string>& fastest_fixed_kernel);

/// The call at feedback time, in one: retrieves the best `k` notes of the op_type's family for the
/// failing kernel (nothing is read when mode is off), the fastest fixed kernel in notes_and_kernel
/// mode, and appends them.
std::string feedback_with_notes(const std::string& feedback, const NotesStore& store,
                                const std::string& failing_kernel_source, std::string_view op_type, NotesMode mode,
                                int k = kDefaultNotesK);

}  // namespace ptxbench
