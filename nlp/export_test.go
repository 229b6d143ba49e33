package nlp

// NormalizeName exposes normalizeName to the external test that compares it with
// models.NormalizeConcept.
var NormalizeName = normalizeName
