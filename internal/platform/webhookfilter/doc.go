// Package webhookfilter is the endpoint filter of CONTRACT §25: a JSON condition on the
// delivered payload (the §8 body) that decides whether an endpoint gets a delivery. It is
// pure (no store, no domain): Parse validates and compiles a filter once, a Reader made
// for some filters decodes a payload once for all of them, and MatchDoc evaluates each
// against it (the fan-out of one event to up to 16 endpoints decodes the body once).
//
// # Grammar
//
// A filter is a JSON object. Each member is one condition and all must hold (an implicit
// $and; the empty filter {} matches every payload):
//
//	"$and": [filter, …]   every filter holds (a non-empty array)
//	"$or":  [filter, …]   at least one holds (a non-empty array)
//	"$not": filter        the filter does not hold
//	"path": value         the same as "path": {"$eq": value}
//	"path": {"$op": operand, …}   every operator holds
//
// A path is dotted keys into the body ("deal.customer.country"); every segment is
// non-empty, the path does not start with "$" and has no control character. A path walks
// objects only: it never indexes or fans out over an array ("deal.skus.code" is missing,
// whatever the skus), so a path names at most one value.
//
// An object given as a path's condition is an operator object when its keys start with
// "$", a bare value (compared with $eq) when none does, and refused when it mixes both;
// to compare with an object whose keys start with "$", write {"$eq": {…}}.
//
// # Operators and comparison
//
//	$eq, $neq       operand any JSON value
//	$in, $nin       operand an array of at most MaxItems JSON values
//	$gt $gte $lt $lte  operand a number or a string
//	$exists         operand true or false
//
// $eq and $in compare as JSON: values of different kinds are never equal ("1000" is not
// 1000, "007" is not "7"); strings are equal when their code points are; numbers are
// equal when their exact decimal values are (1.0, 1 and 1e0 are equal: a JSON number is a
// value, not a text, and the body's writer may print it either way); arrays are equal
// element by element, objects member by member regardless of order; null equals null.
// $neq is exactly "not $eq" and $nin exactly "not $in".
//
// The range operators compare numbers and decimal strings alike, as exact decimals
// (no float64 rounding: {"$gte": "1000"} and {"$gte": 1000} both work on the seed's
// string prices such as "19999.00"). A decimal string is -?[0-9]+(\.[0-9]+)? — no
// exponent, sign "+", spaces or empty parts. Two strings of which at least one is not a
// decimal string compare by code points. Any other pair (a number with a non-decimal
// string, a boolean, null, an array, an object) does not compare: the operator is false.
//
// A missing path (a segment absent, or a step into a value that is not an object) makes
// every operator false except $neq and $nin, which are true, and {"$exists": false},
// which is true. A key present with the value null exists.
//
// # Limits
//
// Parse refuses, with a *Fault naming the JSON Pointer of the fault from "filter" (as the
// API's param, "filter/deal.status/$in/3"): more than MaxBytes of raw JSON; values nested
// more than MaxDepth objects and arrays deep (the filter object is level 1, so
// {"$or":[{"a":{"$in":[…]}}]} is 5 levels deep); $in or $nin with more than MaxItems
// items; numbers outside §15's bounds (jsonnum: finite, at most 64 characters written
// out); strings and keys that are not valid UTF-8, hold NUL or half a surrogate pair;
// keys given twice in one object; unknown operators; and filters whose static worst-case
// cost exceeds MaxSteps evaluation steps. The step bound counts one step per filter
// object, $and/$or/$not, path segment walked, range or $exists test and JSON value
// compared by $eq/$neq/$in/$nin, and one more per BytesPerStep bytes such a comparison may
// examine (the operand's string, digits or member names, a segment's name): what a step
// costs is then about the same whatever the filter compares, so the bound bounds CPU
// (CONTRACT §21). An $in or $nin list of 8 items or more is looked up by value (a step
// and the bytes hashed) rather than walked, though Parse still counts every item.
// Within MaxBytes no filter reaches MaxSteps today (about 2,050 is the
// most 4 KiB can spell); the check stands so that raising one limit cannot silently raise
// the cost. Evaluation counts the steps it takes, never more than Parse counted, and stops
// at MaxSteps whatever Parse said (ErrTooCostly).
//
// # Payloads
//
// A payload costs one pass over its bytes, plus at most what the filters hold, whatever it
// is made of (CONTRACT §21). A Reader builds only what its filters can read — the members
// on their paths, and at the end of a path what the operands compared there can compare:
// scalars, an object's members named in an object operand and their count, an array's
// items when an array operand has its length — and skips the rest, checking its syntax.
// Every number and decimal string it builds is read as an exact decimal once, when the
// payload is decoded, never once per comparison; a comparison then examines at most its
// operand's length. A member name given twice where a filter reads it (on a path, or named
// in an object operand) is refused: RFC 8259 leaves its value undefined. Elsewhere it
// changes no answer: an object with a name no operand has equals none of them whichever
// value the name keeps. Payloads nest at most MaxDocDepth levels. A client's payload is held to §15's number rule before it
// is decoded (jsonnum.FirstFault); the Reader takes numbers of any length.
package webhookfilter
