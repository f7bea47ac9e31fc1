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

/// The longest the whole `read_skill` description gets by default, in
/// characters (SPEC §6.5): a host's or the CLI's `catalog_budget` changes it.
pub const DEFAULT_CATALOG_BUDGET: usize = 16_000;

/// The longest one row's description is printed, in characters; a longer
/// one is cut at a word boundary and ends with `…`.
pub const DESCRIPTION_LIMIT: usize = 1_024;

/// Every fixed sentence one view can write together (about 620 bytes), with
/// room to spare; `compose` asserts the bound in debug builds, which the
/// lens properties exercise on every mode.
const FIXED: usize = 768;

/// Room kept for the sentence about rows left short, and for the rounding
/// of the plan's per-row estimates.
const NOTE_ROOM: usize = 256;

/// What one row costs under a budget, in characters.
struct RowCost {
    whole: usize,
    id_only: usize,
    described: bool,
}

/// How one row is printed under a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// As the view says: with its description when it is the described one.
    AsViewed,
    /// By its id alone.
    IdOnly,
    /// Not at all.
    Omitted,
}

/// Which rows a budget keeps, in render order (menu rows, then the lists),
/// and how many skills it left short.
#[derive(Debug, Default)]
struct Plan {
    shown: Vec<Shown>,
    /// Skills listed by id only, that the view would have described.
    bare: usize,
    /// Skills not listed at all.
    omitted: usize,
}

impl Plan {
    fn at(&self, index: usize) -> Shown {
        self.shown.get(index).copied().unwrap_or(Shown::AsViewed)
    }

    /// Whether any of the `count` rows from `first` is printed.
    fn shows_any(&self, first: usize, count: usize) -> bool {
        (first..first + count).any(|index| self.at(index) != Shown::Omitted)
    }
}

impl OfferView<'_> {
    /// The description a model reads, composed from this view alone, within
    /// the [default budget](DEFAULT_CATALOG_BUDGET).
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
        self.render_within(DEFAULT_CATALOG_BUDGET)
    }

    /// The description within `budget` characters (SPEC §6.5): each
    /// description is cut to [`DESCRIPTION_LIMIT`]; when the whole would
    /// pass the budget, the rows that would pass it are listed by id only,
    /// in the same order, and when even the ids would pass it the rest are
    /// left out; one sentence then says how many, and that `list_skills`
    /// answers with every skill and its description. The view is not
    /// changed: only its wording is shortened.
    ///
    /// ```
    /// use skill_core::Skill;
    /// use skill_tools::offer_view;
    ///
    /// let skills: Vec<Skill> = (0..100)
    ///     .map(|n| {
    ///         let mut skill = Skill::new(format!("skill-{n}"));
    ///         skill.description = Some("Does one careful thing, and says when to use it. ".repeat(4));
    ///         skill
    ///     })
    ///     .collect();
    /// let text = offer_view(&skills, None).render_within(4_000);
    /// assert!(text.chars().count() <= 4_000);
    /// assert!(text.contains(" - skill-0: Does one careful thing"));
    /// assert!(text.contains("skills are listed by id only"), "later rows by id");
    /// assert!(text.contains("list_skills answers with every skill and its description"));
    /// ```
    pub fn render_within(&self, budget: usize) -> String {
        // The byte bound is at least the characters written: most
        // descriptions are known to fit from it, and are written once.
        let bound = self.text_len_bound(&Plan::default());
        if bound <= budget {
            return self.compose_within(&Plan::default(), bound);
        }
        let mut rows = CountedChars(0);
        let _ = self.rows_into_counter(&mut rows);
        if rows.0 <= budget {
            let full = self.compose_within(&Plan::default(), bound);
            if full.chars().count() <= budget {
                return full;
            }
        }
        let fixed = FIXED + 2 * self.cursor.map_or(0, |c| c.chars().count());
        self.compose(&self.plan(budget, fixed))
    }

    /// Every row as the view shows it, counted.
    fn rows_into_counter(&self, rows: &mut CountedChars) -> fmt::Result {
        let plan = Plan::default();
        let mut next = 0;
        for row in self.menu.iter().flatten() {
            menu_row_into(rows, row, Shown::AsViewed)?;
        }
        for list in self.lists() {
            rows_into(rows, list, &plan, &mut next)?;
        }
        Ok(())
    }

    /// The rows a budget keeps: described while they fit, then by id while
    /// the ids fit, then none; `fixed` is at least what the rest of the
    /// description takes. Each row's cost is counted by writing it.
    fn plan(&self, budget: usize, fixed: usize) -> Plan {
        let room = budget.saturating_sub(fixed + NOTE_ROOM);
        let mut plan = Plan::default();
        let mut used = 0;
        let mut short = false;
        for RowCost {
            whole,
            id_only,
            described,
        } in self.row_costs()
        {
            let shown = if !short && used + whole <= room {
                used += whole;
                Shown::AsViewed
            } else if plan.omitted == 0 && used + id_only <= room {
                short = true;
                used += id_only;
                if described {
                    plan.bare += 1;
                }
                Shown::IdOnly
            } else {
                if described {
                    plan.omitted += 1;
                }
                Shown::Omitted
            };
            plan.shown.push(shown);
        }
        plan
    }

    /// What each row costs, in render order, in characters with its line
    /// break: as viewed, and by id only (a menu row keeps its relevance).
    fn row_costs(&self) -> Vec<RowCost> {
        let counted = |write: &dyn Fn(&mut CountedChars) -> fmt::Result| {
            let mut counter = CountedChars(0);
            let _ = write(&mut counter);
            counter.0
        };
        let menu = self.menu.iter().flatten().map(|row| RowCost {
            whole: counted(&|c| menu_row_into(c, row, Shown::AsViewed)),
            id_only: counted(&|c| menu_row_into(c, row, Shown::IdOnly)),
            described: row.described,
        });
        let lists = self.lists().into_iter().flatten().map(|row| RowCost {
            whole: 1 + counted(&|c| {
                row_into(c, row.id, row.described, row.description, Shown::AsViewed)
            }),
            id_only: 1 + counted(&|c| {
                row_into(c, row.id, row.described, row.description, Shown::IdOnly)
            }),
            described: row.described,
        });
        menu.chain(lists).collect()
    }

    /// The lists this mode prints, in order.
    fn lists(&self) -> Vec<&[Row<'_>]> {
        match self.mode {
            OfferMode::Catalog => vec![&self.catalog],
            OfferMode::Tree => vec![&self.tree_open],
            OfferMode::Graph => vec![&self.reachable, &self.refusable],
            OfferMode::NoSkills => Vec::new(),
        }
    }

    /// The description with `plan`'s rows.
    fn compose(&self, plan: &Plan) -> String {
        self.compose_within(plan, self.text_len_bound(plan))
    }

    /// [`compose`](Self::compose) into `bound` bytes, the plan's
    /// [`text_len_bound`](Self::text_len_bound).
    fn compose_within(&self, plan: &Plan, bound: usize) -> String {
        let mut out = String::with_capacity(bound);
        if self.mode == OfferMode::NoSkills {
            out.push_str(OPENING);
            out.push_str(" No skill is offered to you on this call: answer without one, or say what you cannot do.");
            return out;
        }
        let mut next = 0;
        self.lead(&mut out, plan, &mut next);
        out.push_str(OPENING);
        match self.mode {
            OfferMode::Catalog => {
                if plan.shows_any(next, self.catalog.len()) {
                    out.push_str(" Skills you can pick:\n");
                }
                let _ = rows_into(&mut out, &self.catalog, plan, &mut next);
            }
            // Every row the tree leaves open was left out: no heading.
            OfferMode::Tree if !plan.shows_any(next, self.tree_open.len()) => {}
            OfferMode::Tree => {
                out.push_str(
                    " This map is a decision tree: it routes by its own conditions on every iteration and keeps \
                     no cursor for read_skill to move. The skills it leaves to you:\n",
                );
                let _ = rows_into(&mut out, &self.tree_open, plan, &mut next);
            }
            OfferMode::Graph => {
                if !self.reachable.is_empty() {
                    if plan.shows_any(next, self.reachable.len()) {
                        out.push_str("\n\nReachable from here:\n");
                    }
                    let _ = rows_into(&mut out, &self.reachable, plan, &mut next);
                } else if self.nothing_reachable {
                    out.push_str(
                        "\n\nNothing is reachable from here; go on with what you have, or finish.",
                    );
                }
                if !self.refusable.is_empty() {
                    if plan.shows_any(next, self.refusable.len()) {
                        out.push_str("\n\nNot reachable from here:\n");
                    }
                    let _ = rows_into(&mut out, &self.refusable, plan, &mut next);
                }
            }
            OfferMode::NoSkills => {}
        }
        let _ = note_into(&mut out, plan);
        out.push_str("\n\n");
        out.push_str(CLOSING);
        debug_assert!(out.len() <= bound, "{} > {bound}", out.len());
        out
    }

    /// At least the length of the rendered text, so that it is written into
    /// one allocation: the rows are most of it.
    fn text_len_bound(&self, plan: &Plan) -> usize {
        // The rows are counted by writing them, so the count cannot drift
        // from what is written (a relevance note prints the host's number in
        // full, whatever its size).
        let mut rows = Counted(0);
        let mut next = 0;
        for row in self.menu.iter().flatten() {
            let _ = menu_row_into(&mut rows, row, plan.at(next));
            next += 1;
        }
        for list in self.lists() {
            let _ = rows_into(&mut rows, list, plan, &mut next);
        }
        let _ = note_into(&mut rows, plan);
        FIXED + 2 * self.cursor.map_or(0, str::len) + rows.0
    }

    /// The menu and the cursor, ahead of everything else.
    fn lead(&self, out: &mut String, plan: &Plan, next: &mut usize) {
        if let Some(menu) = self
            .menu
            .as_ref()
            .filter(|menu| plan.shows_any(*next, menu.len()))
        {
            out.push_str("This turn calls for a routing choice. Candidates, advisory (let the conversation decide):\n");
            for row in menu {
                let _ = menu_row_into(out, row, plan.at(*next));
                *next += 1;
            }
            if !self.stay {
                out.push_str("You may also answer without calling read_skill.\n\n");
            }
        } else {
            *next += self.menu.as_ref().map_or(0, Vec::len);
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

/// `description` within [`DESCRIPTION_LIMIT`] characters: a longer one is
/// cut at the last word boundary that leaves room for `…`, and ends with it.
fn cut(description: &str) -> std::borrow::Cow<'_, str> {
    if description.chars().nth(DESCRIPTION_LIMIT).is_none() {
        return description.into();
    }
    let head_end = description
        .char_indices()
        .nth(DESCRIPTION_LIMIT - 1)
        .map_or(description.len(), |(at, _)| at);
    let head = &description[..head_end];
    let at_word = head
        .rfind(char::is_whitespace)
        .filter(|at| !head[..*at].trim_end().is_empty())
        .unwrap_or(head.len());
    format!("{}…", head[..at_word].trim_end()).into()
}

/// The sentence about the rows a budget left short, after a blank line;
/// nothing when it left none. It claims nothing about the skills but how
/// this description lists them.
fn note_into(out: &mut impl Write, plan: &Plan) -> fmt::Result {
    let skills = |n: usize| {
        if n == 1 {
            "1 skill is".to_owned()
        } else {
            format!("{n} skills are")
        }
    };
    match (plan.bare, plan.omitted) {
        (0, 0) => Ok(()),
        (bare, 0) => write!(
            out,
            "\n\nTo keep this description short, {} listed by id only; list_skills answers with every skill and its description.",
            skills(bare)
        ),
        (0, omitted) => write!(
            out,
            "\n\nTo keep this description short, {} not listed here; list_skills answers with every skill and its description.",
            skills(omitted)
        ),
        (bare, omitted) => write!(
            out,
            "\n\nTo keep this description short, {} listed by id only and {omitted} more not listed here; list_skills answers with every skill and its description.",
            skills(bare)
        ),
    }
}

/// One row: its id, and its description when it is the described one and
/// the plan keeps it.
fn row_into(
    out: &mut impl Write,
    id: &str,
    described: bool,
    description: Option<&str>,
    shown: Shown,
) -> fmt::Result {
    out.write_str(" - ")?;
    out.write_str(id)?;
    if described && shown == Shown::AsViewed {
        out.write_str(": ")?;
        out.write_str(&cut(description.unwrap_or(NO_DESCRIPTION)))?;
    }
    Ok(())
}

/// The rows the plan keeps, one per line, with no line break after the
/// last; `next` is the index of the first in render order, and moves past
/// them.
fn rows_into(out: &mut impl Write, rows: &[Row<'_>], plan: &Plan, next: &mut usize) -> fmt::Result {
    let mut first = true;
    for row in rows {
        let shown = plan.at(*next);
        *next += 1;
        if shown == Shown::Omitted {
            continue;
        }
        if !first {
            out.write_char('\n')?;
        }
        first = false;
        row_into(out, row.id, row.described, row.description, shown)?;
    }
    Ok(())
}

fn menu_row_into(out: &mut impl Write, row: &MenuRow<'_>, shown: Shown) -> fmt::Result {
    if shown == Shown::Omitted {
        return Ok(());
    }
    row_into(out, row.id, row.described, row.description, shown)?;
    if let Some(pct) = row.relevance_pct {
        write!(out, " (relevance about {pct}%)")?;
    }
    out.write_char('\n')
}

/// A writer that only counts the characters written to it.
struct CountedChars(usize);

impl Write for CountedChars {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0 += text.chars().count();
        Ok(())
    }
}

/// A writer that only counts the bytes written to it.
struct Counted(usize);

impl Write for Counted {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0 += text.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use skill_core::{ReadSkillOffer, Skill};

    use super::*;
    use crate::offer_view;

    fn described(id: &str, description: &str) -> Skill {
        let mut skill = Skill::new(id);
        skill.description = Some(description.to_owned());
        skill
    }

    #[test]
    fn a_long_description_is_cut_at_a_word_and_marked() {
        let long = "word ".repeat(400);
        let shown = cut(&long);
        assert!(shown.chars().count() <= DESCRIPTION_LIMIT);
        assert!(shown.ends_with("word…"), "{shown}");
        let unbroken = "x".repeat(2_000);
        assert_eq!(cut(&unbroken).chars().count(), DESCRIPTION_LIMIT);
        let exact = "é".repeat(DESCRIPTION_LIMIT);
        assert_eq!(cut(&exact), exact.as_str(), "at the limit nothing is cut");
    }

    #[test]
    fn within_the_budget_nothing_changes() {
        let skills = vec![described("a", "First."), described("b", "Second.")];
        let view = offer_view(&skills, None);
        assert_eq!(view.render_within(100_000), view.render_within(200));
        assert!(!view.render().contains("list_skills"));
    }

    #[test]
    fn past_the_budget_later_rows_go_by_id_then_out() {
        let skills: Vec<Skill> = (0..300)
            .map(|n| described(&format!("skill-number-{n}"), &"Careful words. ".repeat(10)))
            .collect();
        let view = offer_view(&skills, None);
        for budget in [800, 3_000, 16_000] {
            let text = view.render_within(budget);
            assert!(
                text.chars().count() <= budget,
                "{budget}: {}",
                text.chars().count()
            );
            assert!(
                text.contains("list_skills answers with every skill"),
                "{budget}"
            );
            assert!(text.ends_with(CLOSING));
            // Rows stay in catalog order: each shown id after the one before.
            let shown: Vec<usize> = text
                .lines()
                .filter_map(|line| line.strip_prefix(" - skill-number-"))
                .map(|rest| {
                    rest.split(':')
                        .next()
                        .unwrap_or(rest)
                        .parse()
                        .unwrap_or(usize::MAX)
                })
                .collect();
            assert!(shown.windows(2).all(|w| w[0] < w[1]), "{budget}: {shown:?}");
        }
        let tight = view.render_within(3_000);
        assert!(tight.contains("listed by id only and"), "{tight}");
        assert!(tight.contains("more not listed here"), "{tight}");
    }

    #[test]
    fn a_menu_with_relevance_notes_stays_within_the_budget() {
        use skill_core::{Menu, MenuCandidate};
        let skills: Vec<Skill> = (0..200)
            .map(|n| described(&format!("pick-{n}"), &"Menu words. ".repeat(15)))
            .collect();
        for relevance in [0.6, 1e300] {
            let offer = ReadSkillOffer {
                menu: Some(Menu {
                    candidates: (0..200)
                        .map(|n| MenuCandidate {
                            id: format!("pick-{n}"),
                            relevance: Some(relevance),
                        })
                        .collect(),
                    ..Menu::default()
                }),
                ..ReadSkillOffer::default()
            };
            for budget in [2_000, 16_000] {
                let text = offer_view(&skills, Some(&offer)).render_within(budget);
                assert!(
                    text.chars().count() <= budget,
                    "{relevance} {budget}: {}",
                    text.chars().count()
                );
            }
        }
    }

    #[test]
    fn a_graph_keeps_its_sentences_and_drops_an_emptied_heading() {
        let mut skills: Vec<Skill> = (0..200)
            .map(|n| described(&format!("hop-{n}"), &"Long words here. ".repeat(20)))
            .collect();
        skills.push(Skill::new("start"));
        let offer = ReadSkillOffer {
            grantable: Some((0..200).map(|n| format!("hop-{n}")).collect()),
            cursor_id: Some("start".into()),
            ..ReadSkillOffer::default()
        };
        let text = offer_view(&skills, Some(&offer)).render_within(2_000);
        assert!(text.starts_with("You are in 'start'."), "{text}");
        assert!(text.contains("Reachable from here:\n"), "{text}");
        assert!(text.chars().count() <= 2_000);
        let nothing = offer_view(&skills, Some(&offer)).render_within(10);
        assert!(!nothing.contains("Reachable from here"), "{nothing}");
        assert!(
            nothing.contains("200 skills are not listed here"),
            "{nothing}"
        );
    }
}
