//! Who a request is (SPEC §9.8, §14.7): the `--auth-tokens` file, lines
//! `PRINCIPAL TOKEN_SHA256 [ROLE,…]`, whose bearer tokens are found by
//! their digest alone and compared in constant time; and bearer JWTs
//! checked against `--auth-jwks` ([`super::jwt`]). With both, a token the
//! file names is that principal; any other is read as a JWT.

use std::path::Path;
use std::sync::RwLock;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A line of an `--auth-tokens` file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path}:{line}: {reason}; each line of --auth-tokens is `PRINCIPAL TOKEN_SHA256 [ROLE,…]`: a name, the 64 hexadecimal digits of the token's SHA-256 (`printf %s TOKEN | sha256sum`) and its roles; --auth-jwks is a JSON Web Key Set"
)]
pub struct TokensError {
    /// The file.
    pub path: String,
    /// The line, from 1 (0: the file itself).
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// The principals, the digests of their tokens, and their roles.
#[derive(Debug)]
pub(crate) struct Tokens(Vec<(String, [u8; 32], Vec<String>)>);

impl Tokens {
    /// Read an `--auth-tokens` file: lines `PRINCIPAL TOKEN_SHA256
    /// [ROLE,…]`, blank lines and `#` comments skipped.
    pub(crate) fn read(path: &Path) -> Result<Self, TokensError> {
        let fault = |line: usize, reason: String| TokensError {
            path: path.display().to_string(),
            line,
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|err| fault(0, err.to_string()))?;
        Self::parse(&text).map_err(|(line, reason)| fault(line, reason))
    }

    fn parse(text: &str) -> Result<Self, (usize, String)> {
        let mut tokens = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(principal), Some(digest), roles, None) =
                (words.next(), words.next(), words.next(), words.next())
            else {
                return Err((number, "the line is not two or three words".to_owned()));
            };
            let roles: Vec<String> = roles
                .map(|roles| {
                    roles
                        .split(',')
                        .filter(|role| !role.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let digest = decode_digest(digest).ok_or_else(|| {
                (
                    number,
                    format!("the digest of \"{principal}\" is not 64 hexadecimal digits"),
                )
            })?;
            tokens.push((principal.to_owned(), digest, roles));
        }
        if tokens.is_empty() {
            return Err((0, "the file names no principal".to_owned()));
        }
        Ok(Tokens(tokens))
    }

    /// The principal whose token is `token`, with its roles. Every digest
    /// is compared, in constant time, whichever matches.
    pub(super) fn principal(&self, token: &str) -> Option<Principal> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for (principal, expected, roles) in &self.0 {
            if bool::from(digest.ct_eq(expected)) {
                found = Some(Principal::new(principal.clone(), roles.clone()));
            }
        }
        found
    }
}

/// Who a request is: a principal and its roles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Principal {
    /// Its name: the tokens file's, or `ISS#SUB` of a JWT.
    pub(crate) name: String,
    /// Its roles, sorted, without repeats.
    pub(crate) roles: Vec<String>,
}

impl Principal {
    /// `name` with `roles`.
    pub(crate) fn new(name: String, mut roles: Vec<String>) -> Self {
        roles.sort();
        roles.dedup();
        Principal { name, roles }
    }

    /// What a run is bound to (SPEC §14.7): the principal, with its roles
    /// when it has any, so that its handle presented by another principal,
    /// or by the same one with other roles, names no run.
    pub(crate) fn binding(&self) -> String {
        if self.roles.is_empty() {
            self.name.clone()
        } else {
            format!("{} [{}]", self.name, self.roles.join(","))
        }
    }
}

/// How requests are authenticated: `--auth-tokens`, `--auth-jwks`, or
/// both.
#[derive(Debug)]
pub(crate) struct Auth {
    tokens: Option<Tokens>,
    jwks: Option<RwLock<super::jwt::Jwks>>,
    jwt: Option<super::jwt::JwtConfig>,
}

impl Auth {
    /// The authentication `tokens` and `jwt` ask for; `None` with neither.
    ///
    /// # Errors
    ///
    /// When a file cannot be read or used.
    pub(crate) fn read(
        tokens: Option<&Path>,
        jwt: Option<&super::jwt::JwtConfig>,
    ) -> Result<Option<Self>, TokensError> {
        let tokens = tokens.map(Tokens::read).transpose()?;
        let jwks = jwt
            .map(super::jwt::Jwks::read)
            .transpose()?
            .map(RwLock::new);
        Ok((tokens.is_some() || jwks.is_some()).then(|| Auth {
            tokens,
            jwks,
            jwt: jwt.cloned(),
        }))
    }

    /// The principal `token` names: the tokens file's, else a JWT's.
    pub(super) fn principal(&self, token: &str) -> Option<Principal> {
        if let Some(found) = self
            .tokens
            .as_ref()
            .and_then(|tokens| tokens.principal(token))
        {
            return Some(found);
        }
        let jwks = self.jwks.as_ref()?.read().ok()?;
        jwks.verify(token)
            .ok()
            .map(|(name, roles)| Principal::new(name, roles))
    }

    /// Read the key set again (SIGHUP): the new one replaces the old, or
    /// the old stays, and why is said.
    pub(super) fn reload(&self) {
        let (Some(jwks), Some(config)) = (&self.jwks, &self.jwt) else {
            return;
        };
        match super::jwt::Jwks::read(config) {
            Ok(fresh) => {
                if let Ok(mut held) = jwks.write() {
                    crate::warn(&format!(
                        "the key set {} was read again",
                        fresh.path().display()
                    ));
                    *held = fresh;
                }
            }
            Err(err) => crate::warn(&format!("{err}; the keys read before are kept")),
        }
    }
}

fn decode_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (byte, pair) in digest.iter_mut().zip(hex.as_bytes().chunks(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(digest)
}

/// The token of an `Authorization` value of the bearer scheme, whose name
/// is case-insensitive (RFC 7235).
pub(super) fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_found_by_its_digest_only() {
        // printf %s secret | sha256sum
        let tokens = Tokens::parse(
            "# who may call\nann 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b\n\n",
        )
        .unwrap();
        assert_eq!(
            tokens.principal("secret"),
            Some(Principal::new("ann".into(), vec![]))
        );
        assert_eq!(tokens.principal("secret "), None);
        assert_eq!(tokens.principal(""), None);
    }

    #[test]
    fn a_bad_tokens_line_is_placed_and_explained() {
        assert_eq!(Tokens::parse("ann").unwrap_err().0, 1);
        assert_eq!(Tokens::parse("\nann abc").unwrap_err().0, 2);
        assert_eq!(Tokens::parse("ann 00 extra").unwrap_err().0, 1);
        let digest = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";
        assert_eq!(
            Tokens::parse(&format!("ann {digest} support,auditor,support extra"))
                .unwrap_err()
                .0,
            1
        );
        let tokens = Tokens::parse(&format!("ann {digest} support,auditor,support")).unwrap();
        let ann = tokens.principal("secret").unwrap();
        assert_eq!(ann.roles, vec!["auditor".to_owned(), "support".to_owned()]);
        assert_eq!(ann.binding(), "ann [auditor,support]");
        assert_eq!(Tokens::parse("# nothing").unwrap_err().0, 0);
        let odd = format!("ann {}", "é".repeat(32));
        assert_eq!(Tokens::parse(&odd).unwrap_err().0, 1);
    }
}
