package webhookfilter_test

import (
	"testing"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

// TestSemantics spells out the comparison rules of the package comment, one case each,
// on the deal body and on payloads made for the rule.
func TestSemantics(t *testing.T) {
	const odd = `{"s":"007","n":1000,"f":1.0,"big":1e999999999999,"neg":-1e999999999999,"tiny":1e-999999999999,` +
		`"nul":null,"arr":[1,{"x":1}],"obj":{"b":[1,2],"a":"x"},"price":"19999.00","text":"abc","num":"12.5e1"}`
	cases := []struct {
		name, payload, filter string
		want                  bool
	}{
		{"bare value is $eq", dealBody, `{"deal.status":"signed"}`, true},
		{"several members are an AND", dealBody, `{"deal.status":"signed","event.type":"deal-created"}`, false},
		{"several operators are an AND", dealBody, `{"deal.net_price":{"$gte":"1000","$lt":"20000"}}`, true},
		{"range on a string price, operand a number", dealBody, `{"deal.net_price":{"$gte":1000}}`, true},
		{"range on a string price, exact", dealBody, `{"deal.net_price":{"$gt":19999}}`, false},
		{"$eq compares kinds: a string price is not a number", dealBody, `{"deal.net_price":19999}`, false},
		{"paths never fan out over arrays", dealBody, `{"deal.skus.code":"PLAT-ENT"}`, false},
		{"nor index them", dealBody, `{"deal.skus.0.code":"PLAT-ENT"}`, false},
		{"an array compares whole", odd, `{"arr":[1,{"x":1}]}`, true},
		{"an object compares whole, in any order", odd, `{"obj":{"a":"x","b":[1,2]}}`, true},
		{"an object with a member more is not equal", odd, `{"obj":{"a":"x"}}`, false},
		{`"007" is not "7"`, odd, `{"s":"7"}`, false},
		{`"007" is 7 to a range`, odd, `{"s":{"$gte":7,"$lte":"7.0"}}`, true},
		{`"1000" is not 1000`, `{"n":"1000"}`, `{"n":1000}`, false},
		{"1.0 equals 1", odd, `{"f":1}`, true},
		{"1000 equals 1e3", odd, `{"n":{"$in":[1e3]}}`, true},
		{"huge exponents compare", odd, `{"big":{"$gt":1e63},"neg":{"$lt":-1e62},"tiny":{"$gt":0,"$lt":1e-62}}`, true},
		{"a number and a non-decimal string never compare", odd, `{"text":{"$gt":0}}`, false},
		{"nor does a number with a string exponent", odd, `{"num":{"$gt":1}}`, false},
		{"two strings compare by code points", odd, `{"text":{"$gt":"ab","$lt":"b"}}`, true},
		{"a decimal string and another string compare by code points", odd, `{"text":{"$gt":"100"}}`, true},
		{"null never compares with a range", odd, `{"nul":{"$gte":""}}`, false},
		{"null equals null", odd, `{"nul":null}`, true},
		{"a key present with null exists", odd, `{"nul":{"$exists":true}}`, true},
		{"missing: $eq false", odd, `{"none":null}`, false},
		{"missing: $neq true", odd, `{"none":{"$neq":1}}`, true},
		{"missing: $nin true", odd, `{"none.deeper":{"$nin":[1]}}`, true},
		{"missing: $in false", odd, `{"none":{"$in":[null]}}`, false},
		{"missing: ranges false", odd, `{"$or":[{"none":{"$gt":0}},{"none":{"$lte":0}}]}`, false},
		{"missing: $exists false true", odd, `{"text.inner":{"$exists":false}}`, true},
		{"$neq on another kind is true", odd, `{"s":{"$neq":7}}`, true},
		{"$not", dealBody, `{"$not":{"deal.status":"signed"}}`, false},
		{"$or", dealBody, `{"$or":[{"deal.status":"draft"},{"deal.customer.external_id":"cust_0001"}]}`, true},
		{"$and", dealBody, `{"$and":[{"deal.status":"signed"},{"deal.net_price_currency":{"$in":["EUR"]}}]}`, false},
		{"the empty filter matches", odd, `{}`, true},
		{"the root need not be an object", `[1]`, `{"a":{"$exists":false}}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := webhookfilter.Parse([]byte(c.filter))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := f.Match([]byte(c.payload)); err != nil || got != c.want {
				t.Fatalf("%s = %v, %v; want %v", c.filter, got, err, c.want)
			}
		})
	}
}
