#!/usr/bin/env bash
# No JSON library text reaches a user. Documents are parsed in one place,
# base::parse_json (base/json_value.cpp), which turns every parser failure
# (a syntax error, a number too large for a double) into our words; values
# are read through base::JsonValue, which names the document and the JSON
# path of what is wrong. A source that calls the parser itself, or catches
# nlohmann's exceptions (a missing key, a wrong type), would be passing the
# library's own message on.
# usage: json_errors_check.sh ROOT
set -u
cd "$1" || exit 2
dirs="base sim traces policies rl adapters scenario studies cli"
bad=$(grep -rnE 'catch \(const (nlohmann::)?json::(exception|type_error|invalid_iterator|other_error|parse_error|out_of_range)' \
        $dirs --include='*.cpp' --include='*.hpp' 2>/dev/null | grep -v '^base/json_value\.cpp:')
parse=$(grep -rnE '(nlohmann::)?json::parse\(' $dirs --include='*.cpp' --include='*.hpp' 2>/dev/null | grep -v '^base/json_value\.cpp:')
if [ -n "$bad$parse" ]; then
  echo "sources that parse JSON or catch a JSON library error themselves (use base::parse_json and base::JsonValue):"
  printf '%s\n%s\n' "$bad" "$parse" | sed '/^$/d'
  exit 1
fi
echo "JSON is parsed only by base::parse_json; no JSON library error is caught to be passed on"
