//! Principals (SPEC §14.7): bearer JWTs checked against a JSON Web Key
//! Set, and roles from the tokens file; a run bound to its principal and
//! roles, so that its handle presented by anyone else, or by the same
//! principal with other roles, is answered as an unknown run. `serve
//! --http` in this process, on a loopback port, spoken to in plain HTTP.

mod common;

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};
use skillgraph_mcp::{JwtConfig, ServeConfig};

use common::plain::{call, handle_of, sessionless};
use common::{HttpServed, desk, one_upstream, scratch, tokens_file};

/// An Ed25519 key made for these tests alone (`openssl genpkey -algorithm
/// ed25519`): its PKCS #8 DER in base64, and its public half as a JWK.
const PRIVATE: &str = "MC4CAQAwBQYDK2VwBCIEINK3EoWKhgCsdI+Q8P8mxIjJ9TPforvC6A3okTU5L7Zm";
const PUBLIC_X: &str = "QKKSfikIv4OMgngwwq-U48piDUdHwsm825PkLpx2_Kg";

const ISSUER: &str = "https://id.example";
const AUDIENCE: &str = "skillgraph";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |time| time.as_secs())
}

/// A token signed by the test key under `kid`, with `claims`.
fn jwt(kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(kid.to_owned());
    use base64::Engine as _;
    let der = base64::engine::general_purpose::STANDARD
        .decode(PRIVATE)
        .expect("the test key");
    let key = EncodingKey::from_ed_der(&der);
    encode(&header, claims, &key).expect("a signed token")
}

fn claims(sub: &str, roles: Value) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": now() + 600, "roles": roles})
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn served_with_jwks(name: &str) -> HttpServed {
    let dir = scratch(&format!("{name}-keys"));
    let jwks = dir.join("jwks.json");
    std::fs::write(
        &jwks,
        json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": PUBLIC_X, "kid": "k1", "alg": "EdDSA"}]})
            .to_string(),
    )
    .expect("the key set");
    let config = ServeConfig::new(desk(name, one_upstream(), |_| {}));
    HttpServed::start(config, |http| {
        http.auth_jwt = Some(JwtConfig::new(jwks, ISSUER, AUDIENCE));
    })
}

#[test]
fn a_jwt_the_key_set_verifies_is_a_principal_and_any_other_is_401() {
    let served = served_with_jwks("jwt-verify");
    let addr = served.addr.as_str();
    let good = jwt("k1", &claims("ann", json!(["support"])));
    let first = call(
        addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[("Authorization", &bearer(&good))],
    );
    assert_ne!(first["isError"], true, "{first}");

    let expired = {
        let mut old = claims("ann", json!([]));
        old["exp"] = json!(now() - 3600);
        jwt("k1", &old)
    };
    let wrong_issuer = {
        let mut other = claims("ann", json!([]));
        other["iss"] = json!("https://elsewhere.example");
        jwt("k1", &other)
    };
    let wrong_audience = {
        let mut other = claims("ann", json!([]));
        other["aud"] = json!("another-service");
        jwt("k1", &other)
    };
    let unknown_kid = jwt("k2", &claims("ann", json!([])));
    let mut tampered = good.clone();
    tampered.replace_range(tampered.len() - 3.., "AAA");
    for token in [
        expired,
        wrong_issuer,
        wrong_audience,
        unknown_kid,
        tampered,
        "not-a-jwt".to_owned(),
    ] {
        let answer = sessionless(
            addr,
            "tools/list",
            None,
            json!({}),
            &[("Authorization", &bearer(&token))],
        );
        assert_eq!(answer.status, 401, "{token}");
        assert!(
            answer.head.contains("error=\"invalid_token\""),
            "{}",
            answer.head
        );
    }
}

#[test]
fn a_run_is_bound_to_its_principal_and_its_roles() {
    let served = served_with_jwks("jwt-roles");
    let addr = served.addr.as_str();
    let as_support = bearer(&jwt("k1", &claims("ann", json!("support"))));
    let as_auditor = bearer(&jwt("k1", &claims("ann", json!(["auditor"]))));
    let as_bob = bearer(&jwt("k1", &claims("bob", json!("support"))));
    let first = call(
        addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[("Authorization", &as_support)],
    );
    let run = handle_of(&first);
    let unknown = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": "run_00000000000000000000000000000000"}),
        &[("Authorization", &as_support)],
    );
    for other in [&as_auditor, &as_bob] {
        let theirs = call(
            addr,
            "issue_refund",
            json!({"order_id": 4412, "skillgraph_run": run}),
            &[("Authorization", other)],
        );
        assert_eq!(theirs, unknown, "answered as an unknown run");
    }
    let hers = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[("Authorization", &as_support)],
    );
    assert_ne!(hers["isError"], true, "{hers}");
}

#[test]
fn the_tokens_file_gives_roles_and_other_roles_name_no_run() {
    let tokens = tokens_file(
        "tokens-roles-file",
        &[
            ("ann", "ann-support", "support"),
            ("ann", "ann-both", "support,auditor"),
        ],
    );
    let config = ServeConfig::new(desk("tokens-roles", one_upstream(), |_| {}));
    let served = HttpServed::start(config, |http| http.auth_tokens = Some(tokens.clone()));
    let addr = served.addr.as_str();
    let first = call(
        addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[("Authorization", "Bearer ann-support")],
    );
    let run = handle_of(&first);
    let other_roles = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[("Authorization", "Bearer ann-both")],
    );
    assert_eq!(other_roles["isError"], true, "{other_roles}");
    let same = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[("Authorization", "Bearer ann-support")],
    );
    assert_ne!(same["isError"], true, "{same}");
}
