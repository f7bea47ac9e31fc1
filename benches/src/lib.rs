//! The workloads of `shared/bench/WORKLOADS.md`, built exactly as defined, so
//! that the criterion benches and the `workloads` binary time the same work.

use serde_json::{Value, json};

/// The W1 guard: risk level, score and status.
pub fn w1_guard() -> Value {
    json!({"riskLevel": {"in": ["high", "critical"]}, "score": {"gte": 0.8}, "status": {"eq": "success"}})
}

/// The W1c guard: hop keys only.
pub fn w1c_guard() -> Value {
    json!({"toolName": {"eq": "lookup_order"}, "iteration": {"lte": 5}})
}

/// The 1,000 W1 tool results (about 185 bytes each), as compact JSON text
/// with numbers printed as JavaScript prints them.
pub fn w1_results() -> Vec<String> {
    (0..1000u32)
        .map(|i| {
            let score = f64::from(i % 10) / 10.0;
            json!({
                "orderId": 4412 + i,
                "riskLevel": if i % 3 != 0 { "high" } else { "low" },
                "score": score,
                "customer": {"name": "Ada Lovelace", "tier": "gold", "history": [1, 2, 3, 4, 5]},
                "note": "x".repeat(60),
            })
            .to_string()
            .replace("\"score\":0.0", "\"score\":0")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_about_185_bytes_and_print_numbers_like_javascript() {
        let results = w1_results();
        assert_eq!(results.len(), 1000);
        assert!(results[0].contains("\"score\":0,"), "{}", results[0]);
        assert!(results[1].contains("\"score\":0.1,"), "{}", results[1]);
        let mean = results.iter().map(String::len).sum::<usize>() / results.len();
        assert!((175..=195).contains(&mean), "{mean}");
    }
}
