module github.com/salience-ai/salience

go 1.26
