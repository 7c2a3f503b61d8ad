-- LÖVE's configuration (read before main.lua): one window, no audio (the game makes no sound, and a
-- headless machine has no sound card).
function love.conf(t)
  t.identity = "octonav-example"
  t.version = "11.4"
  t.window.title = "octonav: agents flying over a baked world"
  t.window.width, t.window.height = 1080, 720
  for _, a in ipairs(arg or {}) do
    if a == "--script" then t.window.vsync = 0 end -- the scripted run: as fast as it draws
  end
  t.modules.audio, t.modules.sound, t.modules.joystick, t.modules.physics, t.modules.video =
    false, false, false, false, false
end
