//! The `read_skill` offer: what one request's position grants, hides and
//! proposes. Every field is optional; an absent `grantable` means "no graph".

use serde::{Deserialize, Serialize};

/// What the gate grants from one position, and what the description may name.
///
/// ```
/// use skill_core::ReadSkillOffer;
///
/// let offer: ReadSkillOffer = serde_json::from_str(
///     r#"{ "grantable": ["beta"], "hidden_ids": ["gamma"], "cursor_id": "alpha" }"#,
/// )?;
/// assert!(offer.is_graph());
/// assert!(offer.is_hidden("gamma"));
/// assert!(offer.show_refusable);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadSkillOffer {
    /// The ids the gate admits from here (hops and open skills); `None` when
    /// there is no graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grantable: Option<Vec<String>>,
    /// Ids this reader's role may not be told about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden_ids: Vec<String>,
    /// The skill the cursor stands on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor_id: Option<String>,
    /// The turn-start routing menu, when one is outstanding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub menu: Option<Menu>,
    /// Whether the map is a decision tree (it keeps no cursor for a read to move).
    #[serde(default, skip_serializing_if = "is_false")]
    pub tree_routed: bool,
    /// Whether the description lists the skills a read would be refused for.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub show_refusable: bool,
}

impl Default for ReadSkillOffer {
    fn default() -> Self {
        ReadSkillOffer {
            grantable: None,
            hidden_ids: Vec::new(),
            cursor_id: None,
            menu: None,
            tree_routed: false,
            show_refusable: true,
        }
    }
}

impl ReadSkillOffer {
    /// Whether the offer comes from a graph (it carries `grantable`).
    pub fn is_graph(&self) -> bool {
        self.grantable.is_some()
    }

    /// Whether `id` is hidden from this reader.
    pub fn is_hidden(&self, id: &str) -> bool {
        self.hidden_ids.iter().any(|hidden| hidden == id)
    }
}

/// A turn-start routing menu: candidates the model may pick from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Menu {
    /// The proposed skills, best first.
    #[serde(default)]
    pub candidates: Vec<MenuCandidate>,
    /// The cursor the menu was drawn for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor_id: Option<String>,
    /// Whether staying where the cursor is counts as an answer.
    #[serde(default, skip_serializing_if = "is_false")]
    pub stay: bool,
}

/// One menu row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MenuCandidate {
    /// The proposed skill.
    pub id: String,
    /// How relevant the router judged it, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f64>,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn is_false(value: &bool) -> bool {
    !*value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_object_is_the_default_offer() {
        let offer: ReadSkillOffer = serde_json::from_str("{}").unwrap();
        assert_eq!(offer, ReadSkillOffer::default());
        assert!(!offer.is_graph());
        assert_eq!(serde_json::to_string(&offer).unwrap(), "{}");
    }

    #[test]
    fn the_spec_example_loads() {
        let offer: ReadSkillOffer = serde_json::from_str(
            r#"{ "grantable": ["beta"], "hidden_ids": ["gamma"], "cursor_id": "alpha",
                 "menu": { "candidates": [ { "id": "beta", "relevance": 0.6 } ], "cursor_id": "alpha", "stay": true },
                 "tree_routed": false, "show_refusable": false }"#,
        )
        .unwrap();
        let menu = offer.menu.as_ref().unwrap();
        assert!(menu.stay);
        assert_eq!(menu.candidates[0].relevance, Some(0.6));
        assert!(!offer.show_refusable);
    }
}
