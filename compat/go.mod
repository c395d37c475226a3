module github.com/jetwal/jetwal/compat

go 1.26.0
