//! The canned data: per tool, the one argument it takes and the answer kept
//! for each value of it, read from `data.json`, and the tool calls answered
//! from them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

/// One tool's canned answers, in the shape `data.json` holds them (the
/// Python upstream in `interop/` reads the same file).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CannedTool {
    /// What the tool does, offered in `tools/list`.
    #[serde(default)]
    description: Option<String>,
    /// The name of the one argument the tool takes.
    argument: String,
    /// The answer for each value of the argument, the value written as a
    /// string (`"4412"` for the number 4412).
    answers: BTreeMap<String, JsonObject>,
    /// The answer for every other value; `null` answers with an error.
    default: Option<JsonObject>,
    /// How long the tool takes to answer, in milliseconds (none: at once),
    /// to try timeouts and cancellation against a slow upstream.
    #[serde(default)]
    delay_ms: Option<u64>,
}

impl CannedTool {
    /// The JSON Schema type of the argument: `integer` when every value the
    /// answers are kept for is an integer, else `string`.
    fn argument_type(&self) -> &'static str {
        let integral = |key: &String| key.parse::<i64>().is_ok();
        if !self.answers.is_empty() && self.answers.keys().all(integral) {
            "integer"
        } else {
            "string"
        }
    }

    /// The tool as `tools/list` offers it: the one argument, required.
    fn tool(&self, name: &str) -> Tool {
        let mut properties = JsonObject::new();
        properties.insert(
            self.argument.clone(),
            json!({ "type": self.argument_type() }),
        );
        let mut schema = JsonObject::new();
        schema.insert("type".to_owned(), json!("object"));
        schema.insert("properties".to_owned(), Value::Object(properties));
        schema.insert("required".to_owned(), json!([self.argument]));
        let description = self.description.clone().map(Cow::Owned);
        Tool::new_with_raw(name.to_owned(), description, Arc::new(schema))
    }

    /// The answer kept for `key`, else the default, else `None`.
    fn lookup(&self, key: &str) -> Option<&JsonObject> {
        self.answers.get(key).or(self.default.as_ref())
    }
}

/// Every tool's canned answers, by tool name.
#[derive(Debug)]
pub struct Desk {
    tools: BTreeMap<String, CannedTool>,
}

impl Desk {
    /// Read the canned data from the text of `data.json`.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        Ok(Self {
            tools: serde_json::from_str(text)?,
        })
    }

    /// Every tool, in the order of their names.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools
            .iter()
            .map(|(name, canned)| canned.tool(name))
            .collect()
    }

    /// How long tool `name` takes to answer, when its data says.
    pub fn delay(&self, name: &str) -> Option<std::time::Duration> {
        self.tools
            .get(name)
            .and_then(|canned| canned.delay_ms)
            .map(std::time::Duration::from_millis)
    }

    /// Answer a call of tool `name`: the answer kept for its argument's
    /// value (or the tool's default) as the compact JSON text of the answer
    /// and the same object as structured content; an error answer when
    /// nothing matches. A tool that does not exist, or a call without the
    /// argument as a string or a number, is a protocol error.
    pub fn call(
        &self,
        name: &str,
        arguments: Option<&JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(canned) = self.tools.get(name) else {
            let names: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "there is no tool `{name}` here; call one of {}",
                    names.join(", ")
                ),
                None,
            ));
        };
        let key = match arguments.and_then(|given| given.get(&canned.argument)) {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Number(number)) => number.to_string(),
            _ => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "`{name}` takes one argument, `{}` ({}); pass it, for instance {{\"{}\": ...}}",
                        canned.argument,
                        canned.argument_type(),
                        canned.argument
                    ),
                    None,
                ));
            }
        };
        Ok(match canned.lookup(&key) {
            Some(answer) => CallToolResult::structured(Value::Object(answer.clone())),
            None => CallToolResult::error(vec![ContentBlock::text(format!(
                "Nothing matches {} {key}.",
                canned.argument
            ))]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data shipped beside the crate, which the desk's scenario runs on.
    const SHIPPED: &str = include_str!("../data.json");

    fn desk() -> Desk {
        Desk::parse(SHIPPED).unwrap_or_else(|error| panic!("data.json: {error}"))
    }

    fn call(tool: &str, arguments: Value) -> Result<CallToolResult, ErrorData> {
        let Value::Object(arguments) = arguments else {
            panic!("the arguments of a call are an object")
        };
        desk().call(tool, Some(&arguments))
    }

    fn text_of(answer: &CallToolResult) -> &str {
        match answer.content.as_slice() {
            [block] => block.as_text().map_or("", |text| text.text.as_str()),
            blocks => panic!("one content block expected, got {blocks:?}"),
        }
    }

    #[test]
    fn a_kept_answer_is_its_compact_json_and_the_same_structured_content() {
        let answer = call("lookup_order", json!({ "order_id": 4412 })).unwrap_or_default();
        let expected = json!({
            "status": "success", "orderId": 4412, "riskLevel": "high", "amount": 240,
            "customer": { "tier": "gold" }
        });
        assert_eq!(answer.is_error, Some(false));
        assert_eq!(text_of(&answer), expected.to_string());
        assert_eq!(answer.structured_content, Some(expected));
    }

    #[test]
    fn a_number_written_as_a_string_finds_the_same_answer() {
        let by_number = call("lookup_order", json!({ "order_id": 4413 })).unwrap_or_default();
        let by_text = call("lookup_order", json!({ "order_id": "4413" })).unwrap_or_default();
        assert_eq!(text_of(&by_text), text_of(&by_number));
        assert!(text_of(&by_text).contains("\"riskLevel\":\"low\""));
    }

    #[test]
    fn an_unknown_value_takes_the_default_answer() {
        let answer = call("export_rows", json!({ "period": "1999-Q4" })).unwrap_or_default();
        assert_eq!(answer.is_error, Some(false));
        assert_eq!(
            answer.structured_content,
            Some(json!({ "status": "success", "rows": "rows-empty", "count": 0 }))
        );
    }

    #[test]
    fn an_unknown_value_without_a_default_is_an_error_answer() {
        let answer = call("lookup_order", json!({ "order_id": 9999 })).unwrap_or_default();
        assert_eq!(answer.is_error, Some(true));
        assert_eq!(answer.structured_content, None);
        assert_eq!(text_of(&answer), "Nothing matches order_id 9999.");
    }

    #[test]
    fn a_denied_refund_carries_its_status_at_the_top() {
        let answer = call("issue_refund", json!({ "order_id": 4413 })).unwrap_or_default();
        assert_eq!(answer.is_error, Some(false));
        assert!(text_of(&answer).starts_with("{\"status\":\"denied\""));
    }

    #[test]
    fn a_call_without_its_argument_or_of_no_tool_is_refused_by_name() {
        let missing = call("lookup_order", json!({ "id": 4412 })).err();
        let message = missing.map(|error| error.message.into_owned());
        assert!(message.is_some_and(|m| m.contains("`order_id` (integer)")));
        let unknown = call("slow", json!({})).err();
        let message = unknown.map(|error| error.message.into_owned());
        assert!(message.is_some_and(|m| m.contains("`slow`") && m.contains("lookup_order")));
    }

    #[test]
    fn the_desk_offers_its_seven_tools_each_with_its_one_required_argument() {
        let tools = desk().tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "charge_history",
                "export_rows",
                "issue_refund",
                "lookup_invoice",
                "lookup_order",
                "render_chart",
                "track_parcel"
            ]
        );
        let schema = |name: &str| {
            let tool = tools.iter().find(|tool| tool.name == name);
            tool.map(|tool| Value::Object(tool.input_schema.as_ref().clone()))
        };
        assert_eq!(
            schema("lookup_order"),
            Some(json!({
                "type": "object",
                "properties": { "order_id": { "type": "integer" } },
                "required": ["order_id"]
            }))
        );
        let invoice = schema("lookup_invoice").unwrap_or_default();
        assert_eq!(invoice["properties"]["invoice_id"]["type"], "string");
        assert!(tools.iter().all(|tool| tool.description.is_some()));
    }

    #[test]
    fn data_in_another_shape_is_refused_with_the_key_serde_names() {
        let error = Desk::parse(r#"{"lookup_order": {"argument": "order_id", "answer": {}}}"#);
        let message = error.err().map(|error| error.to_string());
        assert!(message.is_some_and(|m| m.contains("unknown field `answer`")));
    }
}
