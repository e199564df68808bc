package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Find returns the config file to use when no --config flag is given, in this order:
// $TOKSCOPE_CONFIG, $XDG_CONFIG_HOME/tokscope/config.yaml, os.UserConfigDir()/tokscope/config.yaml.
// It returns "", nil when there is none. $TOKSCOPE_CONFIG naming a missing file is an error
// (the user asked for that file); so is a candidate that exists but cannot be read.
func Find() (string, error) {
	if p := os.Getenv("TOKSCOPE_CONFIG"); p != "" {
		info, err := os.Stat(p)
		if err != nil {
			return "", &Error{File: p, Msg: "named by $TOKSCOPE_CONFIG: " + unwrapPathErr(err).Error()}
		}
		if info.IsDir() {
			return "", &Error{File: p, Msg: "named by $TOKSCOPE_CONFIG: is a directory, not a config file"}
		}
		return p, nil
	}
	var candidates []string
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) { // the XDG spec ignores relative paths
		candidates = append(candidates, filepath.Join(x, "tokscope", "config.yaml"))
	}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "tokscope", "config.yaml"))
	}
	for _, p := range candidates {
		info, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return "", &Error{File: p, Msg: "cannot read config: " + unwrapPathErr(err).Error()}
		case info.IsDir():
			return "", &Error{File: p, Msg: "is a directory, not a config file"}
		}
		return p, nil
	}
	return "", nil
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
