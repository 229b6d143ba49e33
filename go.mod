module github.com/salience-ai/salience

go 1.26

require github.com/blevesearch/go-porterstemmer v1.0.3 // indirect
