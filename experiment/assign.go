package experiment

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/salience-ai/salience/models"
)

// Unit maps (experiment id, conversation id) to a number in [0, 1) that looks uniform and
// never changes: the first 53 bits of SHA-256 over the two ids (separated by a zero byte, so
// ("ab", "c") and ("a", "bc") differ). Hashing the experiment id too makes assignments of
// different experiments independent: a conversation in the first tenth of one experiment
// is not in the first tenth of every experiment.
func Unit(experimentID, conversationID string) float64 {
	h := sha256.New()
	h.Write([]byte(experimentID))
	h.Write([]byte{0})
	h.Write([]byte(conversationID))
	var sum [sha256.Size]byte
	return float64(binary.BigEndian.Uint64(h.Sum(sum[:0]))>>11) / (1 << 53)
}

// Assign returns the variant a conversation is in: the variant whose slice of [0, 1), laid
// out in variant order by share, holds Unit. The same conversation always gets the same
// variant, whoever asks and however often; nothing a request says can change it.
func Assign(e *models.Experiment, conversationID string) *models.Variant {
	if len(e.Variants) == 0 {
		return nil
	}
	u := Unit(e.ID, conversationID)
	edge := 0.0
	for i := range e.Variants {
		edge += e.Variants[i].Share
		if u < edge {
			return &e.Variants[i]
		}
	}
	// Shares sum to 1 within 1e-9: a u in the rounding gap goes to the last variant.
	return &e.Variants[len(e.Variants)-1]
}
