package config

import "testing"

func TestClientEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Client
	}{
		{"defaults", map[string]string{"REVOPS_API_KEY": "", "REVOPS_PUBLIC_URL": "", "REVOPS_HTTP_ADDR": "", "REVOPS_DATA_DIR": ""},
			Client{APIURL: "http://127.0.0.1:8080", DataDir: ".revops"}},
		{"http addr", map[string]string{"REVOPS_API_KEY": "sk", "REVOPS_PUBLIC_URL": "", "REVOPS_HTTP_ADDR": "127.0.0.1:9000", "REVOPS_DATA_DIR": "/d"},
			Client{APIKey: "sk", APIURL: "http://127.0.0.1:9000", DataDir: "/d"}},
		{"public url wins", map[string]string{"REVOPS_API_KEY": "", "REVOPS_PUBLIC_URL": "https://api.example.com/", "REVOPS_HTTP_ADDR": "127.0.0.1:9000", "REVOPS_DATA_DIR": ""},
			Client{APIURL: "https://api.example.com", DataDir: ".revops"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if got := ClientEnv(); got != tc.want {
				t.Errorf("ClientEnv() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPprofOnlyWhenOne(t *testing.T) {
	for val, want := range map[string]bool{"": false, "0": false, "true": false, "1": true} {
		t.Setenv(PprofEnv, val)
		c, err := load(t, "dev")
		if err != nil {
			t.Fatal(err)
		}
		if c.Pprof != want {
			t.Errorf("%s=%q: Pprof = %v, want %v", PprofEnv, val, c.Pprof, want)
		}
	}
}
