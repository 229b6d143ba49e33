package sqlite

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/salience-ai/salience/models"
)

// TestComponentsCoverEveryField fills every field of a Components by reflection: each must
// survive the binary form, so a field added to Components but not to components() fails.
func TestComponentsCoverEveryField(t *testing.T) {
	var c models.Components
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			f.SetFloat(float64(i) + 0.1234567890123)
		case reflect.Int:
			f.SetInt(int64(i + 1))
		default:
			t.Fatalf("Components.%s is a %s: teach the column about it", v.Type().Field(i).Name, f.Kind())
		}
	}
	var got models.Components
	if err := decComponents(encComponents(c).([]byte), &got); err != nil || got != c {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, c)
	}
}

// TestComponentsColumn: the binary form reads back exactly (negative zero and extreme
// values included), the zero Components is "", a row written as JSON by earlier versions
// still reads, and damaged values are errors, not zeros.
func TestComponentsColumn(t *testing.T) {
	for _, c := range []models.Components{
		{Confidence: 0.1},
		{Relevance: math.MaxFloat64, Question: math.SmallestNonzeroFloat64, Margin: -3, Features: 2},
		{Score: math.Copysign(0, -1), Match: 1},
	} {
		enc := encComponents(c).([]byte)
		var got models.Components
		if err := decComponents(enc, &got); err != nil || got != c {
			t.Errorf("round trip of %+v: %+v, %v", c, got, err)
		}
		if len(enc) > 1+3+8*3+1 {
			t.Errorf("%+v takes %d bytes", c, len(enc))
		}
	}
	if enc := encComponents(models.Components{}); enc != "" {
		t.Errorf("the zero Components encodes as %q, want \"\"", enc)
	}
	old := models.Components{Confidence: 0.1 + 0.2, BM25: 3.5, Features: 2}
	js, _ := json.Marshal(old)
	var got models.Components
	if err := decComponents(js, &got); err != nil || got != old {
		t.Errorf("a JSON row: %+v, %v; want %+v", got, err, old)
	}
	full := encComponents(models.Components{Confidence: 0.5, Used: 1}).([]byte)
	for name, b := range map[string][]byte{
		"truncated":      full[:len(full)-1],
		"trailing bytes": append(append([]byte{}, full...), 0),
		"unknown form":   {0x7f, 0},
		"unknown field":  {componentsBinary, 0x80, 0x80, 0x80, 0x01},
	} {
		if err := decComponents(b, &got); err == nil || !strings.Contains(err.Error(), "components") {
			t.Errorf("%s: err = %v, want an error naming the column", name, err)
		}
	}
}
