//! The lens: rendering an [`OfferView`] into the `read_skill` description.
//!
//! A lens may omit; it may claim absence or refusal only from evidence it
//! holds for the call it was composed on. So: a hidden id is never written
//! (the view holds none); absence is always "from here"; a set the filter
//! emptied loses its sentence instead of being denied; once the cursor is
//! named, nothing is predicted about what `read_skill` would do, except that
//! staying is allowed when it is.

use std::fmt::{self, Write};

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
                let _ = rows_into(&mut out, &self.catalog);
            }
            OfferMode::Tree => {
                out.push_str(
                    " This map is a decision tree: it routes by its own conditions on every iteration and keeps \
                     no cursor for read_skill to move. The skills it leaves to you:\n",
                );
                let _ = rows_into(&mut out, &self.tree_open);
            }
            OfferMode::Graph => {
                if !self.reachable.is_empty() {
                    out.push_str("\n\nReachable from here:\n");
                    let _ = rows_into(&mut out, &self.reachable);
                } else if self.nothing_reachable {
                    out.push_str(
                        "\n\nNothing is reachable from here; go on with what you have, or finish.",
                    );
                }
                if !self.refusable.is_empty() {
                    out.push_str("\n\nNot reachable from here:\n");
                    let _ = rows_into(&mut out, &self.refusable);
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
    /// one allocation: the rows are most of it.
    fn text_len_bound(&self) -> usize {
        // Every fixed sentence one view can write together (about 620
        // bytes), with room to spare; `render` asserts the bound in debug
        // builds, which the lens properties exercise on every mode.
        const FIXED: usize = 768;
        // The rows are counted by writing them, so the count cannot drift
        // from what is written (a relevance note prints the host's number in
        // full, whatever its size).
        let mut rows = Counted(0);
        for row in self.menu.iter().flatten() {
            let _ = menu_row_into(&mut rows, row);
        }
        for list in [
            &self.catalog,
            &self.tree_open,
            &self.reachable,
            &self.refusable,
        ] {
            let _ = rows_into(&mut rows, list);
        }
        FIXED + 2 * self.cursor.map_or(0, str::len) + rows.0
    }

    /// The menu and the cursor, ahead of everything else.
    fn lead(&self, out: &mut String) {
        if let Some(menu) = &self.menu {
            out.push_str("This turn calls for a routing choice. Candidates, advisory (let the conversation decide):\n");
            for row in menu {
                let _ = menu_row_into(out, row);
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

/// One row: its id, and its description when it is the described one.
fn row_into(
    out: &mut impl Write,
    id: &str,
    described: bool,
    description: Option<&str>,
) -> fmt::Result {
    out.write_str(" - ")?;
    out.write_str(id)?;
    if described {
        out.write_str(": ")?;
        out.write_str(description.unwrap_or(NO_DESCRIPTION))?;
    }
    Ok(())
}

/// The rows, one per line, with no line break after the last.
fn rows_into(out: &mut impl Write, rows: &[Row<'_>]) -> fmt::Result {
    for (index, row) in rows.iter().enumerate() {
        if index > 0 {
            out.write_char('\n')?;
        }
        row_into(out, row.id, row.described, row.description)?;
    }
    Ok(())
}

fn menu_row_into(out: &mut impl Write, row: &MenuRow<'_>) -> fmt::Result {
    row_into(out, row.id, row.described, row.description)?;
    if let Some(pct) = row.relevance_pct {
        write!(out, " (relevance about {pct}%)")?;
    }
    out.write_char('\n')
}

/// A writer that only counts the bytes written to it.
struct Counted(usize);

impl Write for Counted {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0 += text.len();
        Ok(())
    }
}
