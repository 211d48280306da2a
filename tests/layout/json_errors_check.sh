#!/usr/bin/env bash
# No JSON library text reaches a user. Values are read through
# base::JsonValue, which names the document and the JSON path of what is
# wrong; a source that catches nlohmann's semantic exceptions (a missing
# key, a wrong type) would be passing the library's own message on.
# Syntax errors (parse_error) are caught where a document is parsed, and
# reported with their line; base/config.cpp, base/json_file.cpp,
# base/json_value.cpp and scenario/scenario.cpp also catch out_of_range
# there, for a number too large for a double.
# usage: json_errors_check.sh ROOT
set -u
cd "$1" || exit 2
bad=$(grep -rnE 'catch \(const (nlohmann::)?json::(exception|type_error|invalid_iterator|other_error)' \
        base sim traces policies rl adapters scenario studies cli --include='*.cpp' --include='*.hpp' 2>/dev/null)
oor=$(grep -rnE 'catch \(const (nlohmann::)?json::out_of_range' base sim traces policies rl adapters scenario studies cli \
        --include='*.cpp' --include='*.hpp' 2>/dev/null | grep -vE '^(base/config\.cpp|base/json_file\.cpp|base/json_value\.cpp|scenario/scenario\.cpp):')
if [ -n "$bad$oor" ]; then
  echo "sources that catch a JSON library error (read through base::JsonValue instead):"
  printf '%s\n%s\n' "$bad" "$oor" | sed '/^$/d'
  exit 1
fi
echo "no JSON library error is caught to be passed on"
