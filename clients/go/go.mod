module github.com/revops/revops/clients/go

go 1.24
