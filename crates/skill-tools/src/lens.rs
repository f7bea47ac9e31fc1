//! The lens: rendering an [`OfferView`] into the `read_skill` description.
//!
//! A lens may omit; it may claim absence or refusal only from evidence it
//! holds for the call it was composed on. So: a hidden id is never written
//! (the view holds none); absence is always "from here"; a set the filter
//! emptied loses its sentence instead of being denied; once the cursor is
//! named, nothing is predicted about what `read_skill` would do, except that
//! staying is allowed when it is.

use std::fmt::Write;

use crate::offer_view::{MenuRow, OfferMode, OfferView, Row};

/// What a row prints for a skill without a description.
pub const NO_DESCRIPTION: &str = "(no description given)";

const OPENING: &str = "Activates a skill for the next iteration.";
const CLOSING: &str = "Pass the chosen skill's id as `id`.";

impl OfferView<'_> {
    /// The description a model reads, composed from this view alone.
    ///
    /// ```
    /// use skill_core::{ReadSkillOffer, Skill};
    /// use skill_tools::offer_view;
    ///
    /// let mut refunds = Skill::new("refunds");
    /// refunds.description = Some("Issue a refund".into());
    /// let skills = vec![Skill::new("triage"), refunds];
    /// let offer = ReadSkillOffer {
    ///     grantable: Some(vec!["refunds".into()]),
    ///     cursor_id: Some("triage".into()),
    ///     ..ReadSkillOffer::default()
    /// };
    /// let text = offer_view(&skills, Some(&offer)).render();
    /// assert!(text.starts_with("You are in 'triage'."));
    /// assert!(text.contains("Reachable from here:\n - refunds: Issue a refund"));
    /// ```
    pub fn render(&self) -> String {
        let bound = self.text_len_bound();
        let mut out = String::with_capacity(bound);
        if self.mode == OfferMode::NoSkills {
            out.push_str(OPENING);
            out.push_str(" No skill is offered to you on this call: answer without one, or say what you cannot do.");
            return out;
        }
        self.lead(&mut out);
        out.push_str(OPENING);
        match self.mode {
            OfferMode::Catalog => {
                out.push_str(" Skills you can pick:\n");
                rows_into(&mut out, &self.catalog);
            }
            OfferMode::Tree => {
                out.push_str(
                    " This map is a decision tree: it routes by its own conditions on every iteration and keeps \
                     no cursor for read_skill to move. The skills it leaves to you:\n",
                );
                rows_into(&mut out, &self.tree_open);
            }
            OfferMode::Graph => {
                if !self.reachable.is_empty() {
                    out.push_str("\n\nReachable from here:\n");
                    rows_into(&mut out, &self.reachable);
                } else if self.nothing_reachable {
                    out.push_str(
                        "\n\nNothing is reachable from here; go on with what you have, or finish.",
                    );
                }
                if !self.refusable.is_empty() {
                    out.push_str("\n\nNot reachable from here:\n");
                    rows_into(&mut out, &self.refusable);
                }
            }
            OfferMode::NoSkills => {}
        }
        out.push_str("\n\n");
        out.push_str(CLOSING);
        debug_assert!(out.len() <= bound, "{} > {bound}", out.len());
        out
    }

    /// At least the length of the rendered text, so that it is written into
    /// one allocation: the rows are most of it, and their lengths are known.
    fn text_len_bound(&self) -> usize {
        // Every fixed sentence one view can write together (about 620
        // bytes), with room to spare; `render` asserts the bound in debug
        // builds, which the lens properties exercise on every mode.
        const FIXED: usize = 768;
        let menu = self.menu.as_deref().unwrap_or_default();
        let menu_len: usize = menu
            .iter()
            .map(|row| {
                let mut note = Counted(0);
                if let Some(pct) = row.relevance_pct {
                    write_relevance(&mut note, pct);
                }
                row_len(row.id, row.described, row.description) + note.0 + 1
            })
            .sum();
        let lists = [
            &self.catalog,
            &self.tree_open,
            &self.reachable,
            &self.refusable,
        ];
        let rows_len: usize = lists
            .iter()
            .flat_map(|rows| rows.iter())
            .map(|row| row_len(row.id, row.described, row.description) + 1)
            .sum();
        FIXED + 2 * self.cursor.map_or(0, str::len) + menu_len + rows_len
    }

    /// The menu and the cursor, ahead of everything else.
    fn lead(&self, out: &mut String) {
        if let Some(menu) = &self.menu {
            out.push_str("This turn calls for a routing choice. Candidates, advisory (let the conversation decide):\n");
            for row in menu {
                menu_row_into(out, row);
            }
            if !self.stay {
                out.push_str("You may also answer without calling read_skill.\n\n");
            }
        }
        if let Some(cursor) = self.cursor {
            let _ = write!(out, "You are in '{cursor}'.");
            if self.stay {
                let _ = write!(
                    out,
                    " Staying is a valid choice: to remain in '{cursor}', answer without calling read_skill."
                );
            }
            out.push_str("\n\n");
        }
    }
}

/// The length of what [`row_into`] writes.
fn row_len(id: &str, described: bool, description: Option<&str>) -> usize {
    let described = if described {
        2 + description.map_or(NO_DESCRIPTION.len(), str::len)
    } else {
        0
    };
    3 + id.len() + described
}

fn row_into(out: &mut String, id: &str, described: bool, description: Option<&str>) {
    out.push_str(" - ");
    out.push_str(id);
    if described {
        out.push_str(": ");
        out.push_str(description.unwrap_or(NO_DESCRIPTION));
    }
}

/// The rows, one per line, with no line break after the last.
fn rows_into(out: &mut String, rows: &[Row<'_>]) {
    for (index, row) in rows.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        row_into(out, row.id, row.described, row.description);
    }
}

fn menu_row_into(out: &mut String, row: &MenuRow<'_>) {
    row_into(out, row.id, row.described, row.description);
    if let Some(pct) = row.relevance_pct {
        write_relevance(out, pct);
    }
    out.push('\n');
}

/// A menu row's relevance note. Its length has no fixed bound (`pct` is any
/// number the host passed, printed in full), so the size estimate counts it
/// by writing it into [`Counted`].
fn write_relevance(out: &mut impl Write, pct: f64) {
    let _ = write!(out, " (relevance about {pct}%)");
}

/// A writer that only counts the bytes written to it.
struct Counted(usize);

impl Write for Counted {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0 += text.len();
        Ok(())
    }
}
