package cli

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// terminal reports whether w is a terminal: progress bars are drawn only there, so that logs
// and redirected output do not fill with them.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress returns a function that moves a progress bar of total steps on w, drawn with opts,
// or one that does nothing when w is not a terminal.
func progress(w io.Writer, total int, opts ...progressbar.Option) func(int) {
	if !terminal(w) {
		return func(int) {}
	}
	bar := progressbar.NewOptions(total, append([]progressbar.Option{progressbar.OptionSetWriter(w)}, opts...)...)
	return func(n int) { _ = bar.Set(n) }
}
