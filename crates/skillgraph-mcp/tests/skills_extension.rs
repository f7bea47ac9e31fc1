//! The skills extension (SPEC §9.5): the visible skills listed with their
//! files and digests, each file read as a resource without moving the
//! run. The support desk served in this process, spoken to by rmcp's own
//! client, in front of the desk's upstream.

mod common;

use rmcp::model::{GetSkillRequestParams, SkillResources};
use skillgraph::skill_session::Posture;
use skillgraph_mcp::ServeConfig;

use common::{Watcher, connect, desk, one_upstream, resource_text, tool_names};

/// SPEC §9.5: the skills extension lists the visible skills with their
/// files and digests, and reading a skill's `SKILL.md` is no read of the
/// graph: it answers with the file as written and moves nothing, under
/// every posture; read_skill is the one door.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_read_as_resources_move_nothing() {
    let dir = desk("skills-extension", one_upstream(), |_| {});
    for posture in [Posture::Assist, Posture::Rails] {
        let mut config = ServeConfig::new(&dir);
        config.posture = posture;
        let client = connect(config, Watcher::default()).await;
        let listed = client.list_all_skills().await.expect("skills/list answers");
        let uris: Vec<&str> = listed.iter().map(|skill| skill.uri.as_str()).collect();
        assert_eq!(uris.len(), 7, "{uris:?}");
        let refunds = client
            .get_skill(GetSkillRequestParams::new("skill://refunds/SKILL.md"))
            .await
            .expect("skills/get answers");
        assert!(
            refunds
                .skill
                .frontmatter
                .description
                .starts_with("Refund an order")
        );
        let before = tool_names(&client).await;
        let text = resource_text(&client, "skill://refunds/SKILL.md")
            .await
            .expect("the skill's file reads");
        assert!(
            text.starts_with("---") && text.contains("# Refunds"),
            "{posture:?}: {text}"
        );
        let SkillResources::Files(files) = &refunds.skill.resources else {
            panic!("refunds lists its files");
        };
        let manifest = files
            .iter()
            .find(|file| file.uri == "skill://refunds/SKILL.md")
            .expect("the manifest lists SKILL.md");
        manifest
            .verify(text.as_bytes())
            .expect("the file is the one its digest names");
        assert_eq!(
            tool_names(&client).await,
            before,
            "{posture:?}: nothing moved"
        );
        assert!(!before.contains(&"issue_refund".to_owned()), "{before:?}");
        let record = resource_text(&client, "skillgraph://record")
            .await
            .expect("the record");
        assert!(!record.contains(r#""event":"read""#), "{record}");
        client.close().await;
    }
}

/// The support desk with a file of its own beside refunds' `SKILL.md`,
/// `references/policy.md`, and a client connected to it over stdio.
#[cfg(unix)]
async fn desk_with_a_policy(name: &str) -> (std::path::PathBuf, common::Connected<Watcher>) {
    let dir = desk(name, one_upstream(), |_| {});
    let references = dir.join("skills/refunds/references");
    std::fs::create_dir_all(&references).expect("a folder can be made");
    std::fs::write(references.join("policy.md"), "Refund within 30 days.\n")
        .expect("the policy is written");
    std::fs::write(references.join("limits.md"), "At most 250 EUR.\n")
        .expect("the limits are written");
    let client = connect(ServeConfig::new(&dir), Watcher::default()).await;
    (dir, client)
}

/// `path` replaced by a link to `target`.
#[cfg(unix)]
fn swap_for_a_link(path: &std::path::Path, target: &std::path::Path) {
    std::fs::remove_file(path).expect("the file is removed");
    std::os::unix::fs::symlink(target, path).expect("the link is made");
}

/// The refund policy file is served as written.
async fn policy_is_served(client: &rmcp::service::Peer<rmcp::RoleClient>, policy: &str) {
    assert_eq!(
        resource_text(client, policy)
            .await
            .expect("the policy reads"),
        "Refund within 30 days.\n"
    );
}

/// SPEC §9.8, "Files stay in their folder": a skill file or a `SKILL.md`
/// swapped after start-up for a link that leads outside its skill's folder
/// (to `/etc/passwd`, or to another skill's file) is refused, and the
/// answer says nothing of what the link leads to.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_file_swapped_for_a_link_outside_its_folder_is_refused() {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    assert!(passwd.contains("root:"), "this test needs /etc/passwd");
    let (dir, client) = desk_with_a_policy("skill-files-swapped-out").await;
    let refunds = dir.join("skills/refunds");
    let policy = "skill://refunds/references/policy.md";
    policy_is_served(&client, policy).await;
    let billing = dir.join("skills/billing/SKILL.md");
    for (path, uri, target) in [
        (
            refunds.join("references/policy.md"),
            policy,
            std::path::Path::new("/etc/passwd"),
        ),
        (
            refunds.join("SKILL.md"),
            "skill://refunds/SKILL.md",
            std::path::Path::new("/etc/passwd"),
        ),
        (
            refunds.join("references/limits.md"),
            "skill://refunds/references/limits.md",
            billing.as_path(),
        ),
    ] {
        swap_for_a_link(&path, target);
        let refused = match resource_text(&client, uri).await {
            Ok(text) => panic!("{uri} was served through a link out of its folder: {text}"),
            Err(err) => err.to_string(),
        };
        assert!(
            refused.contains(uri) && refused.contains("outside its skill's folder"),
            "{refused}"
        );
        assert!(
            !refused.contains("root:")
                && !refused.contains("passwd")
                && !refused.contains("billing")
                && !refused.contains(&dir.display().to_string()),
            "the refusal tells nothing of the link's target: {refused}"
        );
    }
    client.close().await;
}

/// A skill file swapped after start-up for a link to another file of its
/// own skill's folder is still served: it is that file's text.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_file_swapped_for_a_link_inside_its_folder_is_served() {
    let (dir, client) = desk_with_a_policy("skill-files-swapped-in").await;
    let references = dir.join("skills/refunds/references");
    let policy = "skill://refunds/references/policy.md";
    policy_is_served(&client, policy).await;
    swap_for_a_link(&references.join("policy.md"), &references.join("limits.md"));
    assert_eq!(
        resource_text(&client, policy)
            .await
            .expect("a link within the folder reads"),
        "At most 250 EUR.\n"
    );
    swap_for_a_link(
        &references.join("policy.md"),
        std::path::Path::new("../SKILL.md"),
    );
    let text = resource_text(&client, policy)
        .await
        .expect("a relative link within the folder reads");
    assert!(text.contains("# Refunds"), "{text}");
    client.close().await;
}
