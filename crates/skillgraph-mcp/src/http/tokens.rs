//! The `--auth-tokens` file (SPEC §9.8): lines `PRINCIPAL TOKEN_SHA256`,
//! and the principal a bearer token names, found by its digest alone and
//! compared in constant time.

use std::path::Path;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A line of an `--auth-tokens` file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path}:{line}: {reason}; each line is `PRINCIPAL TOKEN_SHA256`: a name and the 64 hexadecimal digits of the token's SHA-256 (`printf %s TOKEN | sha256sum`)"
)]
pub struct TokensError {
    /// The file.
    pub path: String,
    /// The line, from 1 (0: the file itself).
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// The principals and the digests of their tokens.
#[derive(Debug)]
pub(crate) struct Tokens(Vec<(String, [u8; 32])>);

impl Tokens {
    /// Read an `--auth-tokens` file: lines `PRINCIPAL TOKEN_SHA256`, blank
    /// lines and `#` comments skipped.
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
            let (Some(principal), Some(digest), None) = (words.next(), words.next(), words.next())
            else {
                return Err((number, "the line is not two words".to_owned()));
            };
            let digest = decode_digest(digest).ok_or_else(|| {
                (
                    number,
                    format!("the digest of \"{principal}\" is not 64 hexadecimal digits"),
                )
            })?;
            tokens.push((principal.to_owned(), digest));
        }
        if tokens.is_empty() {
            return Err((0, "the file names no principal".to_owned()));
        }
        Ok(Tokens(tokens))
    }

    /// The principal whose token is `token`. Every digest is compared, in
    /// constant time, whichever matches.
    pub(super) fn principal(&self, token: &str) -> Option<&str> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for (principal, expected) in &self.0 {
            if bool::from(digest.ct_eq(expected)) {
                found = Some(principal.as_str());
            }
        }
        found
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
        assert_eq!(tokens.principal("secret"), Some("ann"));
        assert_eq!(tokens.principal("secret "), None);
        assert_eq!(tokens.principal(""), None);
    }

    #[test]
    fn a_bad_tokens_line_is_placed_and_explained() {
        assert_eq!(Tokens::parse("ann").unwrap_err().0, 1);
        assert_eq!(Tokens::parse("\nann abc").unwrap_err().0, 2);
        assert_eq!(Tokens::parse("ann 00 extra").unwrap_err().0, 1);
        assert_eq!(Tokens::parse("# nothing").unwrap_err().0, 0);
        let odd = format!("ann {}", "é".repeat(32));
        assert_eq!(Tokens::parse(&odd).unwrap_err().0, 1);
    }
}
