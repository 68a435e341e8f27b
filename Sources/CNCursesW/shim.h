#ifndef NETINSPECT_CNCURSESW_SHIM_H
#define NETINSPECT_CNCURSESW_SHIM_H

// Without these two, <ncursesw/ncurses.h> hides the wide-character API
// (get_wch, add_wch, cchar_t) that UTF-8 headers and bodies need.
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif

#include <locale.h>
#include <ncursesw/ncurses.h>

// Macros that Swift does not import as values or functions.
static inline int netinspect_a_bold(void) { return (int)A_BOLD; }
static inline int netinspect_a_reverse(void) { return (int)A_REVERSE; }
static inline int netinspect_a_underline(void) { return (int)A_UNDERLINE; }
static inline int netinspect_a_dim(void) { return (int)A_DIM; }
static inline int netinspect_key_f(int n) { return KEY_F(n); }
static inline int netinspect_color_pair(int n) { return (int)COLOR_PAIR(n); }
static inline int netinspect_key_code_yes(void) { return KEY_CODE_YES; }
// `stdscr` is a mutable global, which Swift 6 refuses to read directly.
static inline WINDOW *netinspect_stdscr(void) { return stdscr; }

// The mouse: left button presses and the wheel, as the terminal reports them.
static inline int netinspect_enable_mouse(void) {
    mouseinterval(0);
    return mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL) != 0;
}
static inline void netinspect_disable_mouse(void) { mousemask(0, NULL); }
// 1: left press, 2: wheel up, 3: wheel down, 0: anything else; the cell in *row and *column.
static inline int netinspect_get_mouse(int *row, int *column) {
    MEVENT event;
    if (getmouse(&event) != OK) return 0;
    *row = event.y;
    *column = event.x;
    if (event.bstate & BUTTON1_PRESSED) return 1;
    if (event.bstate & BUTTON4_PRESSED) return 2;
    if (event.bstate & BUTTON5_PRESSED) return 3;
    return 0;
}


#endif
