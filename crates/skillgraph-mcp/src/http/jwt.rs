//! Bearer JWTs (SPEC §14.7): `--auth-jwks FILE` with `--auth-issuer` and
//! `--auth-audience`. A token is checked by the `jsonwebtoken` crate
//! against the file's key of its header's `kid` (RS256, ES256 or EdDSA
//! only, the key's own algorithm), with `exp` and `nbf` allowed 60 s of
//! leeway and `iss` and `aud` exact; its principal is `ISS#SUB`, its roles
//! the claim `--auth-roles-claim` (strings, or one space-separated string).
//! The file is read again on SIGHUP.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::Value;

use super::TokensError;

/// How bearer JWTs are checked (`--auth-jwks` and its companions).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JwtConfig {
    /// The JSON Web Key Set: `{"keys": [...]}`, each key with its `kid`.
    pub jwks: PathBuf,
    /// The one `iss` accepted.
    pub issuer: String,
    /// The `aud` a token must hold.
    pub audience: String,
    /// The claim that holds the principal's roles (default `roles`).
    pub roles_claim: String,
}

impl JwtConfig {
    /// Tokens signed by the keys of `jwks`, from `issuer`, for `audience`,
    /// their roles in the claim `roles`.
    pub fn new(
        jwks: impl Into<PathBuf>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Self {
        JwtConfig {
            jwks: jwks.into(),
            issuer: issuer.into(),
            audience: audience.into(),
            roles_claim: "roles".to_owned(),
        }
    }
}

/// The keys of a JWKS file, each with the one algorithm it verifies.
pub(crate) struct Jwks {
    keys: HashMap<String, (DecodingKey, Algorithm)>,
    config: JwtConfig,
}

impl std::fmt::Debug for Jwks {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Jwks")
            .field("kids", &self.keys.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The algorithm a key verifies: its `alg`, else what its type and curve
/// allow; `None` for any other (HMAC secrets among them: a shared secret
/// in a key file would sign as well as verify).
fn algorithm_of(key: &Jwk) -> Option<Algorithm> {
    let inferred = match &key.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => {
            Algorithm::ES256
        }
        AlgorithmParameters::OctetKeyPair(_) => Algorithm::EdDSA,
        _ => return None,
    };
    match key.common.key_algorithm {
        None => Some(inferred),
        Some(KeyAlgorithm::RS256) if inferred == Algorithm::RS256 => Some(inferred),
        Some(KeyAlgorithm::ES256) if inferred == Algorithm::ES256 => Some(inferred),
        Some(KeyAlgorithm::EdDSA) if inferred == Algorithm::EdDSA => Some(inferred),
        Some(_) => None,
    }
}

impl Jwks {
    /// Read the key set of `config`.
    ///
    /// # Errors
    ///
    /// [`TokensError`] naming the file: unreadable, not a key set, a key
    /// without `kid`, or of an algorithm other than RS256, ES256, EdDSA.
    pub(crate) fn read(config: &JwtConfig) -> Result<Self, TokensError> {
        let fault = |reason: String| TokensError {
            path: config.jwks.display().to_string(),
            line: 0,
            reason,
        };
        let text = std::fs::read_to_string(&config.jwks).map_err(|err| fault(err.to_string()))?;
        let set: JwkSet = serde_json::from_str(&text)
            .map_err(|err| fault(format!("not a JSON Web Key Set ({err})")))?;
        let mut keys = HashMap::new();
        for key in &set.keys {
            let kid = key
                .common
                .key_id
                .clone()
                .ok_or_else(|| fault("a key has no \"kid\"".to_owned()))?;
            let algorithm = algorithm_of(key).ok_or_else(|| {
                fault(format!(
                    "key \"{kid}\" is not an RS256, ES256 (P-256) or EdDSA key"
                ))
            })?;
            let decoding =
                DecodingKey::from_jwk(key).map_err(|err| fault(format!("key \"{kid}\": {err}")))?;
            keys.insert(kid, (decoding, algorithm));
        }
        if keys.is_empty() {
            return Err(fault("the key set holds no key".to_owned()));
        }
        Ok(Jwks {
            keys,
            config: config.clone(),
        })
    }

    /// The file it was read from.
    pub(crate) fn path(&self) -> &Path {
        &self.config.jwks
    }

    /// The principal (`ISS#SUB`) and roles of `token`, when it is a JWT
    /// these keys verify, from the issuer, for the audience, in its time.
    /// `Err` says why not, for the server's own log: never to the client.
    pub(crate) fn verify(&self, token: &str) -> Result<(String, Vec<String>), String> {
        let header = decode_header(token).map_err(|err| err.to_string())?;
        let kid = header.kid.ok_or("the token's header has no kid")?;
        let (key, algorithm) = self
            .keys
            .get(&kid)
            .ok_or_else(|| format!("no key \"{kid}\" in the key set"))?;
        let mut validation = Validation::new(*algorithm);
        validation.leeway = 60;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let claims = decode::<Value>(token, key, &validation)
            .map_err(|err| err.to_string())?
            .claims;
        let sub = claims["sub"].as_str().ok_or("its sub is not a string")?;
        let roles = match &claims[self.config.roles_claim.as_str()] {
            Value::String(text) => text.split_whitespace().map(str::to_owned).collect(),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        Ok((format!("{}#{sub}", self.config.issuer), roles))
    }
}
