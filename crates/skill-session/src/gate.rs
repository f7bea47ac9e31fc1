//! The read gate (SPEC §8.2): how one `read_skill` call is judged against
//! the cursor as it stood when the iteration began, and the answer the model
//! reads back. Refusals teach under the lens law (SPEC §6.3): they name what
//! a read may take from here, never a hidden id, and claim absence only
//! "from here".

use skill_core::{Menu, Skill, TargetClass, classify_target, spoken};
use skill_tools::activation_confirmation;

use crate::graph::Graph;
use crate::record::{Posture, Refusal};

/// What the gate sees of a session for one read.
pub(crate) struct Gate<'s> {
    pub graph: &'s Graph,
    pub cursor: Option<&'s str>,
    pub hidden: &'s [String],
    pub posture: Posture,
    /// The turn's menu while it is outstanding.
    pub menu: Option<&'s Menu>,
}

/// The gate's verdict on one read, and the answer the model reads.
pub(crate) struct Verdict {
    pub class: TargetClass,
    /// `None` when accepted.
    pub refusal: Option<Refusal>,
    /// When refused: the ids the answer named.
    pub allowed: Vec<String>,
    pub text: String,
}

impl Gate<'_> {
    fn is_hidden(&self, id: &str) -> bool {
        self.hidden.iter().any(|hidden| hidden == id)
    }

    /// The members of `ids` this session may name.
    fn visible<'a>(&self, ids: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
        ids.filter(|id| !self.is_hidden(id)).collect()
    }

    /// Judge a read of `id`, a skill of the catalog.
    pub fn judge(&self, id: &str) -> Verdict {
        let hops = self.graph.map().reachable(self.cursor);
        let class = classify_target(self.cursor, id, &hops, self.graph.open_skills());
        let refusal = if self.is_hidden(id) {
            Some(Refusal::Unreachable)
        } else {
            match class {
                TargetClass::SelfTarget => Some(Refusal::SelfCall),
                TargetClass::Unreachable => Some(Refusal::Unreachable),
                TargetClass::Open => None,
                TargetClass::Hop => self.posture_refusal(id),
            }
        };
        let Some(refusal) = refusal else {
            return Verdict {
                class,
                refusal: None,
                allowed: Vec::new(),
                text: self.accepted_text(id),
            };
        };
        let (allowed, text) = self.refusal_answer(id, refusal, &hops);
        Verdict {
            class,
            refusal: Some(refusal),
            allowed,
            text,
        }
    }

    /// How the posture judges a read of a hop.
    fn posture_refusal(&self, id: &str) -> Option<Refusal> {
        match (self.posture, self.menu) {
            (Posture::Assist, _) => None,
            (Posture::Rails, _) => Some(Refusal::PostureRails),
            (Posture::Guard, None) => Some(Refusal::PostureGuardNoMenu),
            (Posture::Guard, Some(menu)) => {
                let on_menu = menu.candidates.iter().any(|c| c.id == id);
                (!on_menu).then_some(Refusal::PostureGuardOffMenu)
            }
        }
    }

    /// An accepted read answers per SPEC §6.1: the body of a skill delivered
    /// by read, else a confirmation.
    fn accepted_text(&self, id: &str) -> String {
        match self.graph.skill(id).and_then(delivered_body) {
            Some(body) => body.to_owned(),
            None => activation_confirmation(id),
        }
    }

    /// The ids a refusal names, and its text.
    fn refusal_answer(&self, id: &str, refusal: Refusal, hops: &[&str]) -> (Vec<String>, String) {
        let open = || self.graph.open_skills().iter().map(String::as_str);
        let subject = if self.is_hidden(id) {
            "that skill".to_owned()
        } else {
            format!("'{id}'")
        };
        match refusal {
            Refusal::SelfCall => {
                let body = self.graph.skill(id).and_then(delivered_body);
                (vec![id.to_owned()], self_notice(id, body))
            }
            // The gate never refuses a read as malformed or unknown (its
            // driver does, before the gate); such an id is out of reach.
            Refusal::Unreachable
            | Refusal::Malformed
            | Refusal::Unknown
            | Refusal::BudgetExhausted => {
                let said = spoken(hops.iter().copied().chain(open()), |id| !self.is_hidden(id));
                let allowed = dedup(said.named);
                (
                    allowed.clone(),
                    unreachable_text(&subject, said.held, &allowed),
                )
            }
            Refusal::PostureRails | Refusal::PostureGuardNoMenu => {
                let allowed = dedup(self.visible(open()));
                (
                    allowed.clone(),
                    posture_text(&subject, refusal, &allowed, &[]),
                )
            }
            Refusal::PostureGuardOffMenu => {
                let menu = self.menu.map(|m| &m.candidates[..]).unwrap_or_default();
                let on_menu = dedup(self.visible(menu.iter().map(|c| c.id.as_str())));
                let open = dedup(self.visible(open()));
                let text = posture_text(&subject, refusal, &open, &on_menu);
                let mut allowed = on_menu;
                for id in open {
                    if !allowed.contains(&id) {
                        allowed.push(id);
                    }
                }
                (allowed, text)
            }
        }
    }
}

/// The body a read delivers: under `tool-only` or `both`, when non-empty.
fn delivered_body(skill: &Skill) -> Option<&str> {
    (skill.surface_mode.delivers_by_read() && !skill.body.is_empty()).then_some(skill.body.as_str())
}

fn dedup(ids: Vec<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(ids.len());
    for id in ids {
        if !out.iter().any(|known| known == id) {
            out.push(id.to_owned());
        }
    }
    out
}

/// The notice for a read of the skill in use.
fn self_notice(id: &str, body: Option<&str>) -> String {
    let notice = format!("You are already in '{id}': this read changed nothing.");
    match body {
        Some(body) => format!("{notice}\n\n{body}"),
        None => notice,
    }
}

/// `unreachable`: what a read may take from here. When the hidden filter
/// emptied that set, its sentence is dropped, not negated.
fn unreachable_text(subject: &str, held: bool, allowed: &[String]) -> String {
    let head = format!("read_skill cannot take {subject} from here.");
    if !allowed.is_empty() {
        format!("{head} From here it can take: {}.", allowed.join(", "))
    } else if !held {
        format!("{head} Nothing is wired out of here for a read: carry on as you are, or finish.")
    } else {
        head
    }
}

/// The posture refusals: who moves the cursor in this session, the menu a
/// `guard` pick must come from, and the open skills a read may still take.
fn posture_text(subject: &str, refusal: Refusal, open: &[String], menu: &[String]) -> String {
    let mut text = match refusal {
        Refusal::PostureRails => format!(
            "read_skill did not take {subject}: in this session only the map's routes move you between skills, never a read."
        ),
        Refusal::PostureGuardOffMenu => format!(
            "read_skill did not take {subject}: in this session a read moves you only to a skill on this turn's menu."
        ),
        _ => format!(
            "read_skill did not take {subject}: in this session a read moves you only while a turn's menu is open, and none is open now."
        ),
    };
    if !menu.is_empty() {
        text.push_str(&format!(" On the menu: {}.", menu.join(", ")));
    }
    if !open.is_empty() {
        text.push_str(&format!(" A read can still open: {}.", open.join(", ")));
    }
    text.push_str(" Otherwise carry on as you are, or finish.");
    text
}
