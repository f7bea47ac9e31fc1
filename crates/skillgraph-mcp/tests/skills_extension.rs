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
