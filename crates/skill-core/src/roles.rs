//! Roles (SPEC §14.8): the skills a map hides from a principal by the
//! roles it holds, and which of its roles a run takes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The role every principal without a declared role takes.
pub const ANY_ROLE: &str = "*";

/// One role of a map's `roles`: the skill ids it hides.
///
/// ```
/// use skill_core::Role;
///
/// let role: Role = serde_json::from_str(r#"{ "hide": ["payroll"] }"#)?;
/// assert_eq!(role.hide, ["payroll"]);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Role {
    /// The ids hidden from a principal of this role (a role grants every
    /// skill it does not hide).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hide: Vec<String>,
}

/// A map's `roles`, by name.
pub type Roles = BTreeMap<String, Role>;

/// A principal none of whose roles the map declares, on a map with no `*`
/// role: it may run nothing (SPEC §14.8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} declared by this map, which has no \"*\" role for the others; give the principal one of the map's roles ({}), or declare \"*\" in the map's roles",
    held_roles(.held),
    .declared.join(", ")
)]
pub struct NoRole {
    /// The roles the principal holds, as given.
    pub held: Vec<String>,
    /// The roles the map declares.
    pub declared: Vec<String>,
}

impl NoRole {
    /// The stable code of the refusal.
    pub fn code(&self) -> &'static str {
        "role-none"
    }
}

fn held_roles(held: &[String]) -> String {
    match held {
        [] => "the principal holds no role, and no role is".to_owned(),
        [one] => format!("the principal's role \"{one}\" is not"),
        many => format!(
            "none of the principal's roles ({}) is",
            many.iter()
                .map(|role| format!("\"{role}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Whether `name` may name a role: not empty, with no white space and no
/// comma (a token file lists roles comma-separated).
///
/// ```
/// use skill_core::is_role_name;
///
/// assert!(is_role_name("support") && is_role_name("*"));
/// assert!(!is_role_name("a b") && !is_role_name("a,b") && !is_role_name(""));
/// ```
pub fn is_role_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == ',')
}

/// The roles a run of a principal holding `held` takes on a map declaring
/// `roles`: those of `held` the map declares, sorted and each once; with
/// none of them `*`, when the map declares it. A map with no roles takes
/// none (and hides nothing).
///
/// ```
/// use skill_core::{Role, Roles, roles_taken};
///
/// let mut roles = Roles::new();
/// roles.insert("support".into(), Role { hide: vec!["payroll".into()] });
/// roles.insert("*".into(), Role { hide: vec!["payroll".into(), "ledger".into()] });
/// assert_eq!(roles_taken(&roles, &["support".into(), "guest".into()])?, ["support"]);
/// assert_eq!(roles_taken(&roles, &["guest".into()])?, ["*"]);
/// assert_eq!(roles_taken(&Roles::new(), &["guest".into()])?, Vec::<String>::new());
/// # Ok::<(), skill_core::NoRole>(())
/// ```
///
/// # Errors
///
/// [`NoRole`] when the map declares roles, none of `held`, and no `*`.
pub fn roles_taken(roles: &Roles, held: &[String]) -> Result<Vec<String>, NoRole> {
    if roles.is_empty() {
        return Ok(Vec::new());
    }
    let mut taken: Vec<String> = held
        .iter()
        .filter(|role| roles.contains_key(role.as_str()))
        .cloned()
        .collect();
    taken.sort();
    taken.dedup();
    if taken.is_empty() {
        if !roles.contains_key(ANY_ROLE) {
            return Err(NoRole {
                held: held.to_vec(),
                declared: roles.keys().cloned().collect(),
            });
        }
        taken.push(ANY_ROLE.to_owned());
    }
    Ok(taken)
}

/// The ids hidden from a run that took `taken` (as [`roles_taken`] gives
/// them): those every one of its declared roles hides, each once, in the
/// order the first of them lists them. A role the map does not declare
/// adds nothing; with none declared, nothing is hidden.
///
/// ```
/// use skill_core::{Role, Roles, withheld_ids};
///
/// let mut roles = Roles::new();
/// roles.insert("support".into(), Role { hide: vec!["ledger".into(), "payroll".into()] });
/// roles.insert("auditor".into(), Role { hide: vec!["payroll".into()] });
/// assert_eq!(withheld_ids(&roles, &["support".into()]), ["ledger", "payroll"]);
/// // A role grants what it does not hide.
/// assert_eq!(withheld_ids(&roles, &["auditor".into(), "support".into()]), ["payroll"]);
/// ```
pub fn withheld_ids(roles: &Roles, taken: &[String]) -> Vec<String> {
    let mut declared = taken.iter().filter_map(|role| roles.get(role.as_str()));
    let Some(first) = declared.next() else {
        return Vec::new();
    };
    let rest: Vec<&Role> = declared.collect();
    let mut withheld: Vec<String> = Vec::new();
    for id in &first.hide {
        if !withheld.contains(id) && rest.iter().all(|role| role.hide.contains(id)) {
            withheld.push(id.clone());
        }
    }
    withheld
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(declared: &[(&str, &[&str])]) -> Roles {
        declared
            .iter()
            .map(|(name, hide)| {
                let hide = hide.iter().map(|id| (*id).to_owned()).collect();
                ((*name).to_owned(), Role { hide })
            })
            .collect()
    }

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn a_principal_with_no_declared_role_and_no_star_is_refused_naming_roles_only() {
        let declared = roles(&[("support", &["payroll"]), ("auditor", &[])]);
        let refused = roles_taken(&declared, &names(&["guest"])).unwrap_err();
        assert_eq!(refused.code(), "role-none");
        let text = refused.to_string();
        assert!(
            text.contains("\"guest\"") && text.contains("auditor, support"),
            "{text}"
        );
        assert!(
            !text.contains("payroll"),
            "a refusal names no skill: {text}"
        );
        let none = roles_taken(&declared, &[]).unwrap_err().to_string();
        assert!(none.contains("holds no role"), "{none}");
    }

    #[test]
    fn the_hidden_set_is_the_intersection_of_the_roles_taken() {
        let declared = roles(&[
            ("support", &["ledger", "payroll", "ledger"]),
            ("auditor", &["payroll", "ledger"]),
            ("admin", &[]),
            ("*", &["payroll"]),
        ]);
        assert_eq!(
            withheld_ids(&declared, &names(&["support"])),
            ["ledger", "payroll"]
        );
        // In the order the first role taken (by name) lists them.
        assert_eq!(
            withheld_ids(&declared, &names(&["auditor", "support"])),
            ["payroll", "ledger"]
        );
        assert!(withheld_ids(&declared, &names(&["admin", "support"])).is_empty());
        assert_eq!(withheld_ids(&declared, &names(&["*"])), ["payroll"]);
        assert!(withheld_ids(&declared, &names(&["nobody"])).is_empty());
        let taken = roles_taken(&declared, &names(&["support", "guest", "support"])).unwrap();
        assert_eq!(taken, ["support"]);
    }
}
